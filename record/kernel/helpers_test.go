package kernel

import (
	"bytes"

	"github.com/dpperf/dpperf/record/ctf"
)

// decodeOne wraps encoded events in a packet and decodes them.
func decodeOne(md *ctf.Metadata, events []byte) ([]ctf.Event, error) {
	var buf bytes.Buffer
	if err := ctf.NewStream(&buf, "k", "cpu0").WritePacket(0, 1<<40, 0, events); err != nil {
		return nil, err
	}
	p, err := ctf.NewReader(&buf, md).Next()
	if err != nil {
		return nil, err
	}
	return p.Events, nil
}
