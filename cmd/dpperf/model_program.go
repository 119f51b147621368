package main

import (
	"context"
	"flag"
	"io"
	"path/filepath"

	"github.com/dpperf/dpperf/internal/fail"
	"github.com/dpperf/dpperf/model/program"
	"github.com/dpperf/dpperf/model/spec"
)

// programFlags say how vertices that name a packet program get their
// service time (model/program), and keep the stages that got one.
type programFlags struct {
	deploy  string
	noCache bool
	stages  []program.Stage
}

func addProgramStageFlags(fs *flag.FlagSet) *programFlags {
	pf := &programFlags{}
	fs.StringVar(&pf.deploy, "deploy", "", "vertices that name a program run in the mean time of this trace's packets (`FILE` pcap/pcapng) instead of the bound's worst case")
	fs.BoolVar(&pf.noCache, "no-cache", false, "compute the bounds of vertices that name an object again instead of reading them from the user's cache")
	return pf
}

// resolvePrograms gives every vertex of s that names a program its service
// time; path is the specification file.
func resolvePrograms(ctx context.Context, s *spec.Spec, path string, pf *programFlags) error {
	if pf == nil {
		pf = &programFlags{}
	}
	o := program.Options{Trace: pf.deploy}
	if !pf.noCache {
		o.CacheDir = program.DefaultCacheDir()
	}
	st, err := program.Resolve(ctx, s, filepath.Dir(path), o)
	if err != nil {
		return fail.Input(path, err)
	}
	if pf.deploy != "" && len(st) == 0 {
		return fail.Usagef("--deploy: no vertex of %s names a program", path)
	}
	pf.stages = st
	return nil
}

// writeProgramStages lists the program stages under a text result.
func writeProgramStages(w io.Writer, pf *programFlags) error {
	if pf == nil {
		return nil
	}
	return program.WriteStages(w, pf.stages)
}
