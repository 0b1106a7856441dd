package coordinator

import (
	"encoding/binary"
	"fmt"
)

// Wire format of the coordination messages. Every message is a 14-byte
// header, little-endian:
//
//	byte 0      kind (msgReady, msgLaunch, msgFail, msgBye)
//	byte 1      error class of a msgFail (classNone, classMismatch, ...), else 0
//	bytes 2-5   ID.Stage; for msgFail the rank the failure is attributed to
//	bytes 6-13  ID.Seq; 0 for msgFail and msgBye
//
// A msgFail carries its message text after the header; every other kind is
// exactly the header. Followers send msgReady to the leader; the leader sends
// msgLaunch to followers; msgFail and msgBye go both ways.
const (
	msgReady  byte = 1 // follower -> leader: the exchange is registered here
	msgLaunch byte = 2 // leader -> follower: the next exchange in the launch order
	msgFail   byte = 3 // either way: the coordinator failed (origin rank, class, text)
	msgBye    byte = 4 // either way: this rank closed cleanly
)

const headerLen = 14

// maxFailText bounds the text of a failure notice so that a message stays
// small whatever error a stage returned.
const maxFailText = MaxMessageSize - headerLen

// MaxMessageSize is the largest message a Coordinator sends (a failure notice
// with its text; every other message is 14 bytes), for transports that
// receive into fixed-size buffers.
const MaxMessageSize = 4110

// Error classes carried by msgFail, so that errors.Is works across ranks.
const (
	classNone     byte = 0
	classMismatch byte = 1
	classPeerLost byte = 2
	classClosed   byte = 3
)

func classOf(err error) byte {
	switch err {
	case ErrMismatch:
		return classMismatch
	case ErrPeerLost:
		return classPeerLost
	case ErrClosed:
		return classClosed
	}
	return classNone
}

func classErr(b byte) error {
	switch b {
	case classMismatch:
		return ErrMismatch
	case classPeerLost:
		return ErrPeerLost
	case classClosed:
		return ErrClosed
	}
	return nil
}

type message struct {
	kind  byte
	class byte
	id    ID     // msgReady, msgLaunch
	rank  int    // msgFail: the rank the failure is attributed to
	text  string // msgFail
}

func encodeID(kind byte, id ID) []byte {
	b := make([]byte, headerLen)
	b[0] = kind
	binary.LittleEndian.PutUint32(b[2:], id.Stage)
	binary.LittleEndian.PutUint64(b[6:], id.Seq)
	return b
}

func encodeFail(e *Error) []byte {
	text := e.Msg
	if len(text) > maxFailText {
		text = text[:maxFailText]
	}
	b := make([]byte, headerLen, headerLen+len(text))
	b[0] = msgFail
	b[1] = classOf(e.class)
	binary.LittleEndian.PutUint32(b[2:], uint32(e.Rank))
	return append(b, text...)
}

// decode parses a message from a peer. It never panics, whatever b holds.
func decode(b []byte, size int) (message, error) {
	if len(b) < headerLen {
		return message{}, fmt.Errorf("message of %d bytes (want at least %d)", len(b), headerLen)
	}
	m := message{kind: b[0], class: b[1]}
	stage := binary.LittleEndian.Uint32(b[2:])
	seq := binary.LittleEndian.Uint64(b[6:])
	switch m.kind {
	case msgReady, msgLaunch:
		if len(b) != headerLen || m.class != 0 {
			return message{}, fmt.Errorf("malformed message of kind %d (%d bytes, class %d)", m.kind, len(b), m.class)
		}
		m.id = ID{Stage: stage, Seq: seq}
	case msgFail:
		if m.class > classClosed || int64(stage) >= int64(size) || seq != 0 {
			return message{}, fmt.Errorf("malformed failure notice (class %d, rank %d of %d)", m.class, stage, size)
		}
		m.rank = int(stage)
		m.text = string(b[headerLen:])
	case msgBye:
		if len(b) != headerLen || m.class != 0 || stage != 0 || seq != 0 {
			return message{}, fmt.Errorf("malformed goodbye (%d bytes)", len(b))
		}
	default:
		return message{}, fmt.Errorf("unknown message kind %d", m.kind)
	}
	return m, nil
}
