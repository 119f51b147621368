package event

// MaxEvents bounds the events of one path: every Kind is below it.
const MaxEvents = 16

// Record is one request: when it reached each event of its path (0 where
// the event was not seen) and what it was. Collectors that assemble
// requests themselves (the BPF programs) hand records over whole; the
// analyzer builds them from events otherwise.
type Record struct {
	TS    [MaxEvents]int64 // indexed by Kind
	Dev   Dev
	Bytes uint32
	CPU   uint16 // CPU of the first event
	// QID and CID are the NVMe queue and command id of the first event,
	// when it carries them: what the initiator and the target of one
	// request both see, so that two hosts' records can be joined.
	QID uint16
	CID uint16
	Op  Op
}

// Start returns the time of the first observed event.
func (r *Record) Start() int64 {
	for _, t := range r.TS {
		if t != 0 {
			return t
		}
	}
	return 0
}
