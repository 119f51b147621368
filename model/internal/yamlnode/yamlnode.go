// Package yamlnode edits YAML trees in place (go.yaml.in/yaml/v3 nodes), so
// that a changed file keeps its comments, key order and layout: look up a
// key of a mapping, replace or add a scalar, delete a key, find a list
// entry by name, and encode with two-space indentation.
package yamlnode

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Get returns the value of key in mapping m, or nil.
func Get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Set makes key of mapping m the plain scalar value, replacing what was
// there (keeping its comments) or appending the key.
func Set(m *yaml.Node, key, value string) error {
	if m == nil || m.Kind != yaml.MappingNode {
		return fmt.Errorf("set %s: not in a mapping", key)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Value: value, Line: old.Line, Column: old.Column,
				LineComment: old.LineComment, HeadComment: old.HeadComment, FootComment: old.FootComment}
			return nil
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
	return nil
}

// Delete removes key from mapping m if present.
func Delete(m *yaml.Node, key string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// Named returns the mapping in list s whose field "name" is name, or nil.
func Named(s *yaml.Node, name string) *yaml.Node {
	if s == nil || s.Kind != yaml.SequenceNode {
		return nil
	}
	for _, e := range s.Content {
		if n := Get(e, "name"); n != nil && n.Value == name {
			return e
		}
	}
	return nil
}

// Encode writes the document doc with two-space indentation.
func Encode(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	return b.Bytes(), nil
}
