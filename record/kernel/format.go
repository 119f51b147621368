package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/internal/tracefs"
	"github.com/dpperf/dpperf/record/ctf"
)

// Field is one field of a tracepoint record.
type Field struct {
	Name    string
	Offset  int
	Size    int
	Signed  bool
	Kind    ctf.Kind
	DataLoc bool // __data_loc string: a u32 (len<<16 | offset) pointing into the record
}

// Format is the layout of one tracepoint's records.
type Format struct {
	Category string
	Name     string
	ID       uint32
	Fields   []Field // without the common_* header fields
	Size     int     // bytes of the fixed part of a record
	DataLoc  bool    // has dynamic data after the fixed part
}

// Tracefs is where tracefs is looked for, in order.
var Tracefs = []string{tracefs.Root, "/sys/kernel/debug/tracing"}

var reField = regexp.MustCompile(`^\s*field:(.+?);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);`)

// ReadFormat reads the format of tracepoint "category:name" from tracefs.
func ReadFormat(tracepoint string) (*Format, error) {
	cat, name, ok := strings.Cut(tracepoint, ":")
	if !ok || cat == "" || name == "" || strings.ContainsAny(tracepoint, "/ ") || strings.Contains(tracepoint, "..") {
		return nil, fmt.Errorf("tracepoint %q: want CATEGORY:NAME such as block:block_rq_issue", tracepoint)
	}
	// A fresh machine may have tracefs unmounted; without root the
	// mount fails and the error below says where it was looked for.
	_ = tracefs.Ensure(Tracefs[0])
	var lastErr error
	for _, root := range Tracefs {
		data, err := os.ReadFile(filepath.Join(root, "events", cat, name, "format"))
		if err == nil {
			f, err := ParseFormat(string(data))
			if err != nil {
				return nil, fmt.Errorf("tracepoint %s: %w", tracepoint, err)
			}
			f.Category, f.Name = cat, name
			return f, nil
		}
		lastErr = err
	}
	if errors.Is(lastErr, os.ErrNotExist) {
		return nil, fmt.Errorf("tracepoint %s: not found in tracefs (is tracefs mounted at %s? see available_events)", tracepoint, Tracefs[0])
	}
	return nil, fmt.Errorf("tracepoint %s: %w", tracepoint, lastErr)
}

// ParseFormat parses the text of a tracefs format file. Fields it cannot
// represent (arrays other than char arrays) are left out.
func ParseFormat(text string) (*Format, error) {
	f := &Format{}
	seenFormat := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[3:]), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("format: bad ID line %q", line)
			}
			f.ID = uint32(id)
		case strings.HasPrefix(line, "format:"):
			seenFormat = true
		}
		m := reField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		off, err1 := strconv.Atoi(m[2])
		size, err2 := strconv.Atoi(m[3])
		if err1 != nil || err2 != nil || off > 1<<16 || size > 1<<16 {
			return nil, fmt.Errorf("format: bad offset or size in %q", strings.TrimSpace(line))
		}
		f.Size = max(f.Size, off+size)
		decl := strings.TrimSpace(m[1])
		fld, ok := parseDecl(decl, off, size, m[4] == "1")
		if !ok || strings.HasPrefix(fld.Name, "common_") {
			continue
		}
		f.DataLoc = f.DataLoc || fld.DataLoc
		f.Fields = append(f.Fields, fld)
	}
	if !seenFormat || f.Size == 0 {
		return nil, errors.New("format: no field list")
	}
	return f, nil
}

// parseDecl reads a C declaration such as "unsigned int bytes",
// "char comm[16]" or "__data_loc char[] cmd".
func parseDecl(decl string, off, size int, signed bool) (Field, bool) {
	i := strings.LastIndexAny(decl, " \t*")
	if i < 0 || i == len(decl)-1 {
		return Field{}, false
	}
	name, typ := decl[i+1:], strings.TrimSpace(decl[:i+1])
	fld := Field{Offset: off, Size: size, Signed: signed}
	array := false
	if j := strings.IndexByte(name, '['); j >= 0 {
		name, array = name[:j], true
	}
	if name == "" {
		return Field{}, false
	}
	fld.Name = name
	switch {
	case strings.HasPrefix(typ, "__data_loc") && strings.Contains(typ, "char"):
		if size != 4 {
			return Field{}, false
		}
		fld.Kind, fld.DataLoc = ctf.KindString, true
	case strings.HasPrefix(typ, "__data_loc"), strings.HasPrefix(typ, "__rel_loc"):
		return Field{}, false
	case array && strings.HasSuffix(strings.TrimSuffix(typ, " const"), "char"):
		fld.Kind = ctf.KindString
	case array:
		return Field{}, false
	default:
		kinds := map[int][2]ctf.Kind{1: {ctf.KindU8, ctf.KindS8}, 2: {ctf.KindU16, ctf.KindS16}, 4: {ctf.KindU32, ctf.KindS32}, 8: {ctf.KindU64, ctf.KindS64}}
		k, ok := kinds[size]
		if !ok {
			return Field{}, false
		}
		fld.Kind = k[0]
		if signed {
			fld.Kind = k[1]
		}
	}
	return fld, true
}

// Class is the CTF event class of records of f with identifier id: the
// thread and process ids (tid, tgid) of the current task, then f's fields.
func (f *Format) Class(id uint8) ctf.EventClass {
	c := ctf.EventClass{ID: id, Name: f.Category + ":" + f.Name,
		Fields: []ctf.FieldDecl{{Name: "tid", Kind: ctf.KindU32}, {Name: "tgid", Kind: ctf.KindU32}}}
	// CTF readers drop one leading underscore of a field name, so clashes
	// are resolved with a "tp_" prefix instead.
	seen := map[string]bool{"tid": true, "tgid": true}
	for _, fld := range f.Fields {
		name := ctf.Identifier(fld.Name)
		for seen[strings.TrimPrefix(name, "_")] {
			name = "tp_" + strings.TrimPrefix(name, "_")
		}
		seen[strings.TrimPrefix(name, "_")] = true
		c.Fields = append(c.Fields, ctf.FieldDecl{Name: name, Kind: fld.Kind})
	}
	return c
}

// AppendFields decodes the fields of rec, a raw record of f, and appends
// them in CTF encoding. Strings end at their first NUL or at the end of
// their space; data outside rec reads as empty or zero.
func (f *Format) AppendFields(b, rec []byte) []byte {
	for _, fld := range f.Fields {
		if fld.Kind == ctf.KindString {
			var s []byte
			if fld.DataLoc {
				if fld.Offset+4 <= len(rec) {
					loc := uint32(rec[fld.Offset]) | uint32(rec[fld.Offset+1])<<8 | uint32(rec[fld.Offset+2])<<16 | uint32(rec[fld.Offset+3])<<24
					off, n := int(loc&0xffff), int(loc>>16)
					if off < len(rec) {
						s = rec[off:min(off+n, len(rec))]
					}
				}
			} else if fld.Offset < len(rec) {
				s = rec[fld.Offset:min(fld.Offset+fld.Size, len(rec))]
			}
			for i, c := range s {
				if c == 0 {
					s = s[:i]
					break
				}
			}
			b = append(b, s...)
			b = append(b, 0)
			continue
		}
		var raw [8]byte
		if fld.Offset+fld.Size <= len(rec) {
			copy(raw[:], rec[fld.Offset:fld.Offset+fld.Size])
		}
		b = append(b, raw[:fld.Size]...)
	}
	return b
}
