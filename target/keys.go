package target

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// KeyCost is a helper's cost on maps whose keys have Bytes bytes.
type KeyCost struct {
	Bytes int
	Cost  Vec
}

// HelperKeyCost prices a helper call on a map of the given type and key
// size. Where the target measured the helper at several key sizes
// (HelperKeys), the cost is that of the smallest measured size at least
// keyBytes, raised to the dearest smaller size (so a noisy measurement
// never makes a longer key cheaper); a key longer than every measured one
// costs the largest size's cost plus its growth per byte since the size
// before, and extrapolated reports it. Otherwise the cost is HelperCost's.
func (t *Target) HelperKeyCost(helper, mapType string, keyBytes int) (v Vec, ok, extrapolated bool) {
	ks := t.HelperKeys[helper][mapType]
	if len(ks) == 0 || keyBytes <= 0 {
		v, ok = t.HelperCost(helper, mapType)
		return v, ok, false
	}
	var env Vec
	for _, k := range ks {
		for c := range env {
			env[c] = max(env[c], k.Cost[c])
		}
		if k.Bytes >= keyBytes {
			return env, true, false
		}
	}
	if n := len(ks); n > 1 {
		last, prev := ks[n-1], ks[n-2]
		for c := range env {
			slope := max(0, (last.Cost[c]-prev.Cost[c])/float64(last.Bytes-prev.Bytes))
			env[c] += slope * float64(keyBytes-last.Bytes)
		}
	}
	return env, true, true
}

// keyCostsYAML is helper → map type → key bytes → cost.
type keyCostsYAML map[string]map[string]map[int]costMap

func (f *file) helperKeys(t *Target) error {
	t.HelperKeys = map[string]map[string][]KeyCost{}
	for helper, byType := range f.HelperKeys {
		t.HelperKeys[helper] = map[string][]KeyCost{}
		for mt, bySize := range byType {
			var ks []KeyCost
			for size, c := range bySize {
				if size <= 0 {
					return fmt.Errorf("helper_keys.%s.%s: key size %d is not positive", helper, mt, size)
				}
				v, err := t.vecOf(fmt.Sprintf("helper_keys.%s.%s.%d", helper, mt, size), c)
				if err != nil {
					return err
				}
				ks = append(ks, KeyCost{Bytes: size, Cost: v})
			}
			slices.SortFunc(ks, func(a, b KeyCost) int { return a.Bytes - b.Bytes })
			t.HelperKeys[helper][mt] = ks
		}
	}
	return nil
}

func (t *Target) helperKeysNode() *yaml.Node {
	n := mapping(false)
	for _, h := range keys(t.HelperKeys) {
		byType := mapping(false)
		for _, mt := range keys(t.HelperKeys[h]) {
			bySize := mapping(true)
			for _, k := range t.HelperKeys[h][mt] {
				bySize.Content = append(bySize.Content, num(float64(k.Bytes)), t.vec(k.Cost))
			}
			add(byType, mt, bySize)
		}
		add(n, h, byType)
	}
	return n
}
