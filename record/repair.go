package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpperf/dpperf/record/ctf"
)

// Repair cuts every CTF stream file and pcapng file under dir back to its
// last whole packet or block, and returns the files it cut (relative to
// dir). Every packet is written with one write call, but a process killed
// with SIGKILL during a write of more than one page can leave the start of
// a packet behind; viewers reject such a file until it is cut.
func Repair(dir string) ([]string, error) {
	var cut []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") || d.Name() == "metadata" {
			return nil
		}
		var valid func(io.Reader) (int64, error)
		switch {
		case strings.HasSuffix(path, ".pcapng"):
			valid = pcapngLength
		default:
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), "metadata")); err != nil {
				return nil
			}
			valid = ctfLength
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		n, err := valid(f)
		info, serr := f.Stat()
		f.Close()
		if err != nil {
			return fmt.Errorf("repair %s: %w", path, err)
		}
		if serr != nil {
			return serr
		}
		if n < info.Size() {
			if err := os.Truncate(path, n); err != nil {
				return fmt.Errorf("repair: %w", err)
			}
			rel, _ := filepath.Rel(dir, path)
			cut = append(cut, rel)
		}
		return nil
	})
	return cut, err
}

// ctfLength returns the length of the whole packets at the start of a
// stream file.
func ctfLength(r io.Reader) (int64, error) {
	var off int64
	var hdr [32]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return off, nil
		}
		if binary.LittleEndian.Uint32(hdr[:]) != ctf.Magic {
			return 0, fmt.Errorf("packet at byte %d: bad magic", off)
		}
		size := int64(binary.LittleEndian.Uint64(hdr[24:]) / 8)
		if size < int64(len(hdr)) {
			return 0, fmt.Errorf("packet at byte %d: bad size", off)
		}
		n, err := io.CopyN(io.Discard, r, size-int64(len(hdr)))
		if err != nil || n != size-int64(len(hdr)) {
			return off, nil
		}
		off += size
	}
}

// pcapngLength returns the length of the whole blocks at the start of a
// little-endian pcapng file.
func pcapngLength(r io.Reader) (int64, error) {
	var off int64
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return off, nil
		}
		size := int64(binary.LittleEndian.Uint32(hdr[4:]))
		if size < 12 || size%4 != 0 {
			return 0, errors.New("pcapng: bad block length")
		}
		n, err := io.CopyN(io.Discard, r, size-8)
		if err != nil || n != size-8 {
			return off, nil
		}
		off += size
	}
}
