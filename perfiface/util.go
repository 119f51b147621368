package perfiface

import (
	"fmt"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func sprintInts(v []int) string { return fmt.Sprint(v) }
