package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cliTable reads docs/cli.md's table of commands: command → schema.
func cliTable(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| ((?:`[^`]+`(?:, )?)+) \\| [^|]+ \\| [^|]+ \\| ([^ |]+) \\|")
	table := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, c := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
			table[c[1]] = m[2]
		}
	}
	return table
}

// TestHelpFollowsConventions: every command's -h lists --json and
// -o/--output, names the document of its JSON, which exists, and
// docs/cli.md's table has the command with that document.
func TestHelpFollowsConventions(t *testing.T) {
	table := cliTable(t)
	cmds := []string{"targets calibrate", "targets fit", "interface diff", "record analyze", "record repair",
		"profile run", "profile analyze", "profile compare", "profile paths"}
	for _, c := range commands() {
		if c.name != "help" && c.name != "model" && c.name != "profile" {
			cmds = append(cmds, c.name)
		}
	}
	for name := range modelCommands {
		cmds = append(cmds, "model "+name)
	}
	schemaRe := regexp.MustCompile(`-json\s+print the result as JSON \(schema: ([^)]+)\)`)
	for _, c := range cmds {
		t.Run(c, func(t *testing.T) {
			out, errs, code := dpperf(t, append(strings.Fields(c), "-h")...)
			help := out + errs
			if code != 0 {
				t.Fatalf("-h: exit %d: %s", code, help)
			}
			m := schemaRe.FindStringSubmatch(help)
			if m == nil {
				t.Fatalf("-h names no --json with its schema:\n%s", help)
			}
			if !strings.Contains(help, "-output FILE") || !strings.Contains(help, "(also -o)") {
				t.Errorf("-h lists no -o/--output FILE:\n%s", help)
			}
			if strings.Contains(help, "\x00") || strings.Contains(help, "\n  -format") || strings.Contains(help, "\n  -o ") {
				t.Errorf("-h lists a hidden flag:\n%s", help)
			}
			schema := m[1]
			file, _, _ := strings.Cut(schema, "#")
			if _, err := os.Stat(filepath.Join("..", "..", file)); err != nil {
				t.Errorf("schema %s: %v", schema, err)
			}
			if table[c] != schema {
				t.Errorf("docs/cli.md gives schema %q, -h %q", table[c], schema)
			}
		})
	}
	for c := range table {
		if !slices.Contains(cmds, c) {
			t.Errorf("docs/cli.md lists %q, which is no command", c)
		}
	}
}

// TestOutputFile: -o writes the report that stdout would get, nothing
// reaches stdout, and a deprecated spelling warns in one line.
func TestOutputFile(t *testing.T) {
	dir := t.TempDir()
	want, _, code := dpperf(t, "targets", "--json")
	if code != 0 || !strings.Contains(want, `"schema": "dpperf.targets/v1"`) {
		t.Fatalf("targets --json: exit %d:\n%s", code, want)
	}
	file := filepath.Join(dir, "t.json")
	out, errs, code := dpperf(t, "targets", "--json", "-o", file)
	if code != 0 || out != "" {
		t.Fatalf("targets --json -o: exit %d, stdout %q: %s", code, out, errs)
	}
	if got := readFile(t, file); got != want {
		t.Errorf("-o wrote\n%s\nnot what stdout gets:\n%s", got, want)
	}
	_, errs, code = dpperf(t, "targets", "--output", filepath.Join(dir, "missing", "t.txt"))
	if code != 2 || !strings.Contains(errs, "missing") || strings.Count(errs, "\n") != 1 {
		t.Errorf("-o into a missing directory: exit %d: %q", code, errs)
	}
	spec := "../../examples/model/echo-accel/spec.yaml"
	js, _, _ := dpperf(t, "model", "estimate", "--json", spec)
	old, errs, code := dpperf(t, "model", "estimate", "--format", "json", spec)
	if code != 0 || old != js || errs != "dpperf: --format is deprecated; use --json\n" {
		t.Errorf("--format json: exit %d, same output %v, stderr %q", code, old == js, errs)
	}
}
