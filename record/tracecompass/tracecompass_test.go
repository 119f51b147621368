package tracecompass

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/record/ctf"
)

// node is one element of a parsed XML file.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	line     int
}

func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
	}
}

// parse reads a well-formed XML document into a tree.
func parse(data []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			line := 1 + bytes.Count(data[:d.InputOffset()], []byte("\n"))
			n := &node{name: t.Name.Local, attrs: map[string]string{}, line: line}
			for _, a := range t.Attr {
				if a.Name.Space == "" {
					n.attrs[a.Name.Local] = a.Value
				}
			}
			if len(stack) == 0 {
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && len(bytes.TrimSpace(t)) > 0 {
				return nil, fmt.Errorf("text %q inside <%s>: the schema has no mixed content", bytes.TrimSpace(t), stack[len(stack)-1].name)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

// validate checks n, of schema type typ, and its subtree against schema.
func validate(n *node, typ string) []error {
	et, ok := schema[typ]
	if !ok {
		return []error{fmt.Errorf("line %d: <%s>: no schema type %s", n.line, n.name, typ)}
	}
	var errs []error
	for a, v := range n.attrs {
		enum, ok := et.attrs[a]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("line %d: <%s> has no attribute %s", n.line, n.name, a))
		case enum == "int":
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				errs = append(errs, fmt.Errorf("line %d: <%s %s=%q>: not an integer", n.line, n.name, a, v))
			}
		case enum != "" && !slices.Contains(enums[enum], v):
			errs = append(errs, fmt.Errorf("line %d: <%s %s=%q>: want one of %v", n.line, n.name, a, v, enums[enum]))
		}
	}
	for _, a := range et.required {
		if _, ok := n.attrs[a]; !ok {
			errs = append(errs, fmt.Errorf("line %d: <%s> lacks required attribute %s", n.line, n.name, a))
		}
	}
	last := -1
	for _, c := range n.children {
		if i := slices.Index(order[typ], c.name); i >= 0 {
			if i < last {
				errs = append(errs, fmt.Errorf("line %d: <%s> after <%s> in <%s>: the schema wants it before", c.line, c.name, order[typ][last], n.name))
			}
			last = max(last, i)
		}
		ct, ok := et.children[c.name]
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: <%s> may not contain <%s>", c.line, n.name, c.name))
			continue
		}
		errs = append(errs, validate(c, ct)...)
	}
	return errs
}

// loadAll parses every shipped XML file.
func loadAll(t *testing.T) map[string]*node {
	t.Helper()
	names, err := fs.Glob(Files, "*.xml")
	if err != nil || len(names) != 2 {
		t.Fatalf("XML files %v: %v", names, err)
	}
	docs := map[string]*node{}
	for _, name := range names {
		data, _ := Files.ReadFile(name)
		root, err := parse(data)
		if err != nil {
			t.Fatalf("%s: not well-formed: %v", name, err)
		}
		docs[name] = root
	}
	return docs
}

func TestSchema(t *testing.T) {
	for name, root := range loadAll(t) {
		if root.name != "tmfxml" {
			t.Errorf("%s: root <%s>, want <tmfxml>", name, root.name)
		}
		for _, err := range validate(root, "tmfxml") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestValidatorRejects makes sure the validator catches the mistakes it
// exists for.
func TestValidatorRejects(t *testing.T) {
	for _, doc := range []string{
		`<tmfxml><stateProvider id="a" version="1"><eventHandler eventName="x"><stateChange><stateAttribute type="constant" value="a"/><stateValue type="integer" value="1"/></stateChange></eventHandler></stateProvider></tmfxml>`,
		`<tmfxml><stateProvider id="a"><eventHandler eventName="x"/></stateProvider></tmfxml>`,
		`<tmfxml><stateProvider id="a" version="1"><eventHandler name="x"/></stateProvider></tmfxml>`,
		`<tmfxml><timeGraphView id="v"><entry path="*"><display type="eventField" value="x"/></entry></timeGraphView></tmfxml>`,
		`<tmfxml><pattern id="p" version="1"><patternHandler><fsm id="f"><transitions/></fsm></patternHandler></pattern></tmfxml>`,
		`<tmfxml><timeGraphView id="v"><entry path="*"/><definedValue name="a" value="1"/></timeGraphView></tmfxml>`,
	} {
		root, err := parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if len(validate(root, "tmfxml")) == 0 {
			t.Errorf("accepted %s", doc)
		}
	}
}

// metadataClasses returns the event classes as the metadata dpperf writes
// declares them, read back by the CTF reader, keyed by name, with the
// field names TraceCompass shows (TSDL's leading '_' removed).
func metadataClasses(t *testing.T) map[string][]string {
	t.Helper()
	md := ctf.Metadata{UUID: ctf.NewUUID(), Label: "l", Classes: ctf.StandardClasses()}
	parsed, err := ctf.ParseMetadata(md.Text())
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string][]string{}
	for _, c := range parsed.Classes {
		var fields []string
		for _, f := range c.Fields {
			fields = append(fields, strings.TrimPrefix(f.Name, "_"))
		}
		classes[c.Name] = fields
	}
	return classes
}

// aspects are the event aspects of a CTF trace in TraceCompass that an
// eventField may name besides the event's fields.
var aspects = []string{"Channel"}

// fieldRefs returns the event fields n's subtree reads, following
// locations.
func fieldRefs(n *node, locations map[string]*node) []string {
	var refs []string
	n.walk(func(c *node) {
		switch {
		case c.name == "field":
			refs = append(refs, c.attrs["name"])
		case (c.name == "stateAttribute" || c.name == "stateValue") && c.attrs["type"] == "eventField":
			refs = append(refs, c.attrs["value"])
		case c.name == "stateAttribute" && c.attrs["type"] == "location":
			if l := locations[c.attrs["value"]]; l != nil {
				refs = append(refs, fieldRefs(l, nil)...)
			}
		}
	})
	return refs
}

func childrenNamed(n *node, name string) []*node {
	var out []*node
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// TestNamesMatchMetadata checks every event and field name the analyses
// use against the event classes the CTF metadata declares, and every
// reference between the analyses' own elements.
func TestNamesMatchMetadata(t *testing.T) {
	classes := metadataClasses(t)
	docs := loadAll(t)
	checkFields := func(doc, event string, n *node, locations map[string]*node) {
		fields, ok := classes[event]
		if !ok {
			t.Errorf("%s line %d: event %q is not declared in the CTF metadata", doc, n.line, event)
			return
		}
		for _, f := range fieldRefs(n, locations) {
			if !slices.Contains(fields, f) && !slices.Contains(aspects, f) {
				t.Errorf("%s line %d: event %s has no field %q (fields %v)", doc, n.line, event, f, fields)
			}
		}
	}
	analyses := map[string]bool{}
	for _, root := range docs {
		for _, a := range root.children {
			if a.name == "stateProvider" || a.name == "pattern" {
				analyses[a.attrs["id"]] = true
			}
		}
	}
	for doc, root := range docs {
		for _, a := range root.children {
			// Views show analyses that exist.
			if a.name == "timeGraphView" || a.name == "xyView" {
				a.walk(func(n *node) {
					if n.name == "analysis" && !analyses[n.attrs["id"]] {
						t.Errorf("%s line %d: view of unknown analysis %q", doc, n.line, n.attrs["id"])
					}
				})
				continue
			}
			if a.name != "stateProvider" && a.name != "pattern" {
				continue
			}
			locations := map[string]*node{}
			for _, l := range childrenNamed(a, "location") {
				locations[l.attrs["id"]] = l
			}
			defined := map[string]string{}
			for _, d := range childrenNamed(a, "definedValue") {
				defined[d.attrs["name"]] = d.attrs["value"]
			}
			// Checkpoint types are the trace's.
			for k, want := range map[string]int{"START": ctf.CheckpointStart, "END": ctf.CheckpointEnd} {
				if v, ok := defined[k]; ok && v != strconv.Itoa(want) {
					t.Errorf("%s: %s = %s, the trace's checkpoint type is %d", doc, k, v, want)
				}
			}
			a.walk(func(n *node) {
				if v := n.attrs["value"]; strings.HasPrefix(v, "$") && defined[v[1:]] == "" {
					t.Errorf("%s line %d: %s is not a definedValue", doc, n.line, v)
				}
				if n.name == "stateAttribute" && n.attrs["type"] == "location" && locations[n.attrs["value"]] == nil {
					t.Errorf("%s line %d: unknown location %q", doc, n.line, n.attrs["value"])
				}
			})
			for _, h := range childrenNamed(a, "eventHandler") {
				checkFields(doc, h.attrs["eventName"], h, locations)
			}
			for _, ph := range childrenNamed(a, "patternHandler") {
				checkPattern(t, doc, ph, locations, checkFields)
			}
		}
	}
}

// checkPattern checks the tests, actions and state machines of a pattern:
// the names they refer to exist, and the fields each transition's test
// and actions read belong to the transition's event.
func checkPattern(t *testing.T, doc string, ph *node, locations map[string]*node, checkFields func(doc, event string, n *node, locations map[string]*node)) {
	tests, actions, fsms := map[string]*node{}, map[string]*node{}, map[string]*node{}
	for _, c := range ph.children {
		switch c.name {
		case "test":
			tests[c.attrs["id"]] = c
		case "action":
			actions[c.attrs["id"]] = c
		case "fsm":
			fsms[c.attrs["id"]] = c
		}
	}
	for _, id := range strings.Split(ph.attrs["initial"], ":") {
		if fsms[id] == nil {
			t.Errorf("%s line %d: initial state machine %q does not exist", doc, ph.line, id)
		}
	}
	for _, fsm := range fsms {
		states := map[string]bool{}
		fsm.walk(func(n *node) {
			if n.name == "state" || n.name == "final" {
				states[n.attrs["id"]] = true
			}
		})
		if init := fsm.attrs["initial"]; init != "" && !states[init] {
			t.Errorf("%s line %d: initial state %q does not exist", doc, fsm.line, init)
		}
		fsm.walk(func(n *node) {
			if n.name != "transition" && n.name != "precondition" {
				return
			}
			event := n.attrs["event"]
			if n.name == "precondition" {
				checkFields(doc, event, n, locations)
				return
			}
			if !states[n.attrs["target"]] {
				t.Errorf("%s line %d: target state %q does not exist", doc, n.line, n.attrs["target"])
			}
			if c := n.attrs["cond"]; c != "" {
				for _, id := range strings.Split(c, ":") {
					if tests[id] == nil {
						t.Errorf("%s line %d: test %q does not exist", doc, n.line, id)
						continue
					}
					checkFields(doc, event, tests[id], locations)
				}
			}
			for _, id := range strings.Split(n.attrs["action"], ":") {
				if id == "" {
					continue
				}
				if actions[id] == nil {
					t.Errorf("%s line %d: action %q does not exist", doc, n.line, id)
					continue
				}
				checkFields(doc, event, actions[id], locations)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "xml")
	paths, err := Write(dir)
	if err != nil || len(paths) != 2 {
		t.Fatalf("Write: %v %v", paths, err)
	}
	for _, p := range paths {
		got, err := os.ReadFile(p)
		want, _ := Files.ReadFile(filepath.Base(p))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestAgainstXSD validates both files with xmllint against TraceCompass's
// own schema when TRACECOMPASS_XSD names its xmlDefinition.xsd (in
// org.eclipse.tracecompass.tmf.analysis.xml.core/src/org/eclipse/
// tracecompass/tmf/analysis/xml/core/module of a TraceCompass checkout).
// The schema is not shipped with dpperf; TestSchema checks its structure
// without it.
func TestAgainstXSD(t *testing.T) {
	xsd := os.Getenv("TRACECOMPASS_XSD")
	if xsd == "" {
		t.Skip("TRACECOMPASS_XSD not set")
	}
	names, _ := fs.Glob(Files, "*.xml")
	for _, name := range names {
		out, err := exec.Command("xmllint", "--noout", "--schema", xsd, name).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}
