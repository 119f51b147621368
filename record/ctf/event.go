package ctf

// Event identifiers of the standard event classes. Identifiers from
// FirstCustomID on are free for other event classes, such as kernel
// tracepoints, which are declared in the metadata like the standard ones.
const (
	IDRpcCall       = 1
	IDRpcReturned   = 2
	IDRpcDispatch   = 3
	IDRpcReply      = 4
	IDSignalSubmit  = 5
	IDSignalReceive = 6
	IDCheckpoint    = 7
	IDQueueFill     = 8
	FirstCustomID   = 32
)

// Checkpoint types carried in the type field of a Checkpoint event.
const (
	CheckpointUndef     = 0x00
	CheckpointStart     = 0x01
	CheckpointEnd       = 0x02
	CheckpointObjNew    = 0x10
	CheckpointObjDel    = 0x11
	CheckpointObjState  = 0x12
	CheckpointException = 0xfe
	CheckpointFailure   = 0xff
)

// Kind is the type of one event field.
type Kind uint8

// Field kinds. Integers are little-endian and byte-aligned.
const (
	KindInvalid Kind = iota
	KindU8
	KindU16
	KindU32
	KindU64
	KindS8
	KindS16
	KindS32
	KindS64
	KindString
)

var kindNames = [...]string{
	KindU8: "uint8_t", KindU16: "uint16_t", KindU32: "uint32_t", KindU64: "uint64_t",
	KindS8: "int8_t", KindS16: "int16_t", KindS32: "int32_t", KindS64: "int64_t",
	KindString: "string",
}

// TypeName is the TSDL type alias of k.
func (k Kind) TypeName() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return ""
}

// Size is the size in bytes of an integer kind, 0 for strings.
func (k Kind) Size() int {
	switch k {
	case KindU8, KindS8:
		return 1
	case KindU16, KindS16:
		return 2
	case KindU32, KindS32:
		return 4
	case KindU64, KindS64:
		return 8
	}
	return 0
}

// Signed tells whether k is a signed integer kind.
func (k Kind) Signed() bool { return k >= KindS8 && k <= KindS64 }

func kindByName(name string) Kind {
	for k, n := range kindNames {
		if n == name && n != "" {
			return Kind(k)
		}
	}
	return KindInvalid
}

// FieldDecl declares one field of an event class.
type FieldDecl struct {
	Name string
	Kind Kind
}

// EventClass declares an event: its identifier, name and payload fields.
type EventClass struct {
	ID     uint8
	Name   string
	Fields []FieldDecl
}

// StandardClasses are the event classes every dpperf trace declares.
func StandardClasses() []EventClass {
	rpc := []FieldDecl{{"name", KindString}, {"peer", KindString}}
	return []EventClass{
		{IDRpcCall, "Rpc_call", rpc},
		{IDRpcReturned, "Rpc_returned", rpc},
		{IDRpcDispatch, "Rpc_dispatch", rpc},
		{IDRpcReply, "Rpc_reply", rpc},
		{IDSignalSubmit, "Signal_submit", []FieldDecl{{"number", KindU32}}},
		{IDSignalReceive, "Signal_receive", []FieldDecl{{"number", KindU32}, {"context", KindU64}}},
		{IDCheckpoint, "Checkpoint", []FieldDecl{{"data", KindU32}, {"addr", KindU64}, {"type", KindU8}, {"name", KindString}}},
		{IDQueueFill, "Queue_fill", []FieldDecl{{"used", KindU32}, {"capacity", KindU32}, {"name", KindString}}},
	}
}
