package target

// List is the JSON of `dpperf targets --json` (json.md).
type List struct {
	Schema  string  `json:"schema"`
	Targets []Entry `json:"targets"`
}

// Entry is one target of a List.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Basis       string `json:"basis"`
	File        string `json:"file,omitempty"`
}

// BuiltIn lists the built-in targets by name.
func BuiltIn() ([]Entry, error) {
	var list []Entry
	for _, n := range Names() {
		t, err := Load(n)
		if err != nil {
			return nil, err
		}
		list = append(list, Entry{Name: n, Description: t.Description, Basis: t.Basis})
	}
	return list, nil
}
