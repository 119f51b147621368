// Package mapstate reads and writes the contents of a program's BPF maps as
// JSON: the starting maps of an interpreted or kernel run, the maps a run
// leaves behind, and the map contents an SMT model implies. The format is
// described in format.md beside this file. The package never needs a
// running kernel.
package mapstate
