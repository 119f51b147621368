package units

import (
	"encoding/json"
	"math"
	"strconv"
)

// Num is a float64 that encodes +Inf and NaN as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (x Num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler (null reads as +Inf).
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Num(math.Inf(1))
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*x = Num(f)
	return err
}
