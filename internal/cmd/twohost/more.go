package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/profile/analyze"
)

// checkContended compares the joined run with the one made while local
// fio jobs on the target kept the namespace's tags busy: latency
// amplification must name the target's device stage first, as it does
// on one host.
func checkContended(base *analyze.Profile, name string, sb *strings.Builder) ([]string, error) {
	loaded, err := readProfile(name)
	if err != nil {
		return nil, err
	}
	c := analyze.Compare(base, loaded, "joined", "contended")
	if len(c.Groups) == 0 {
		return []string{"the contended run has no group in common with the joined run"}, nil
	}
	g := c.Groups[0]
	fmt.Fprintf(sb, "contended: end to end %s -> %s (LAD %.2f); %s\n", analyze.FormatNS(g.BaseMeanNS), analyze.FormatNS(g.LoadedMeanNS), g.LAD, g.Verdict)
	if len(g.Bottleneck) == 0 || g.Bottleneck[0] != "target-device" {
		return []string{fmt.Sprintf("under contention on the target the bottleneck is %v, not target-device", g.Bottleneck)}, nil
	}
	return nil, nil
}

// checkInterrupted checks the runs both hosts stopped with SIGINT: each
// exited 130 and left no tracefs instance, kprobe or fio behind; each
// wrote its report marked interrupted; the initiator's still holds the
// target's records it fetched on the way out.
func checkInterrupted(dir string, sb *strings.Builder) ([]string, error) {
	var fails []string
	for _, role := range []string{"initiator", "target"} {
		left, err := readLeftover(filepath.Join(dir, "interrupt-"+role+".txt"))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(sb, "interrupted %s: exit %d, %d tracefs instances, %d kprobes, %d fio left\n", role, left["exit"], left["instances"], left["kprobes"], left["fio"])
		if left["exit"] != 130 || !leftNothing(left) {
			fails = append(fails, "the interrupted "+role+" did not exit 130 or left something behind")
		}
	}
	profiles := map[string]*analyze.Profile{}
	for _, f := range []string{"joined-interrupted.json", "target-interrupted.json"} {
		p, err := readProfile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(p.Warnings, "interrupted: partial profile") {
			fails = append(fails, f+" is not marked interrupted")
		}
		profiles[f] = p
	}
	h := profiles["joined-interrupted.json"].Hosts
	if h == nil || h.Partial != "" || h.Join.Joined == 0 {
		return append(fails, "joined-interrupted.json: the interrupted initiator did not join the target's records"), nil
	}
	fmt.Fprintf(sb, "interrupted initiator: joined %d of %d requests\n", h.Join.Joined, h.Join.Initiator)
	return fails, nil
}

// leftNothing reports whether a guest's leftover counts show no tracefs
// instance, kprobe or live fio process.
func leftNothing(left map[string]int) bool {
	return left["instances"] == 0 && left["kprobes"] == 0 && left["fio"] == 0
}

// checkFaults checks the initiator's runs against a peer that refuses
// its token and one that is down: each report came out with the
// initiator's requests, marked partial with the peer's reason, and
// nothing was left behind.
func checkFaults(dir string, sb *strings.Builder) ([]string, error) {
	var fails []string
	left, err := readLeftover(filepath.Join(dir, "interrupt-faults.txt"))
	if err != nil {
		return nil, err
	}
	if !leftNothing(left) {
		fails = append(fails, "the runs against a failing peer left something behind")
	}
	for _, f := range []string{"joined-wrong-token.json", "joined-peer-down.json"} {
		p, err := readProfile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		if p.Hosts == nil || p.Hosts.Partial == "" || len(p.Groups) == 0 || p.Groups[0].Requests == 0 {
			fails = append(fails, f+": no partial report of the initiator's requests")
			continue
		}
		fmt.Fprintf(sb, "%s: %d requests, partial: %s\n", f, p.Groups[0].Requests, p.Hosts.Partial)
	}
	return fails, nil
}

// readLeftover reads the "NAME COUNT" lines a guest wrote after an
// interrupted run.
func readLeftover(name string) (map[string]int, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", name, sc.Text(), err)
		}
		out[k] = n
	}
	for _, k := range []string{"exit", "instances", "kprobes", "fio"} {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("%s: no %q line", name, k)
		}
	}
	return out, sc.Err()
}
