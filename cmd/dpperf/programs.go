package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/cli"
	"github.com/dpperf/dpperf/internal/fail"
)

// progType is the --type flag: the program type of an entry whose section
// names none.
type progType struct{ t ebpf.ProgramType }

func (p *progType) String() string {
	switch p.t {
	case ebpf.XDP:
		return "xdp"
	case ebpf.SchedCLS:
		return "tc"
	}
	return ""
}

func (p *progType) Set(s string) error {
	switch s {
	case "xdp":
		p.t = ebpf.XDP
	case "tc":
		p.t = ebpf.SchedCLS
	default:
		return fmt.Errorf("want xdp or tc, got %q", s)
	}
	return nil
}

// addProgramFlags adds --program and --type to fs.
func addProgramFlags(fs *flag.FlagSet) (*string, *progType) {
	name := fs.String("program", "", "program `NAME` in the object (needed when it holds several; see 'dpperf programs')")
	t := &progType{}
	fs.Var(t, "type", "program `TYPE` (xdp or tc) when the section does not name one (.text, iproute2's \"prog\"); default xdp")
	return name, t
}

// loadPacketProgram reads the chosen program of an object and checks that
// cmd analyses its type.
func loadPacketProgram(path, cmd string, name *string, t *progType) (*bpfprog.Program, error) {
	prog, err := bpfprog.LoadFileWith(path, bpfprog.Options{Program: *name, Type: t.t})
	if err != nil {
		return nil, err
	}
	switch prog.Type {
	case ebpf.XDP, ebpf.SchedCLS, ebpf.SchedACT:
		return prog, nil
	}
	return nil, fail.Inputf(prog.File, "program %s is of type %s; %s analyses packet programs (XDP, TC)", prog.Name, prog.Type, cmd)
}

func runPrograms(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("programs", "programs [--json] [-o FILE] OBJECT.o", stderr)
	out := cli.AddOutput(fs, "bpfprog/programs.md")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(fs, "want one object file, got %d arguments", len(pos))
	}
	return out.Write(stdout, func(w io.Writer) error { return listPrograms(pos[0], out.JSON, w) })
}

// listPrograms writes the candidate programs of an object as a table or
// as JSON.
func listPrograms(path string, asJSON bool, w io.Writer) error {
	o, err := bpfprog.OpenFile(path)
	if err != nil {
		return err
	}
	if asJSON {
		return cli.WriteJSON(w, o.List())
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROGRAM\tSECTION\tTYPE\tINSNS\tFUNCS\tMAPS")
	for _, e := range o.Entries {
		maps := strings.Join(e.Maps, ",")
		if maps == "" {
			maps = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", e.Name, e.Section, bpfprog.TypeText(e.Type), e.Insns, e.Funcs, maps)
	}
	return tw.Flush()
}
