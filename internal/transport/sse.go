package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// SSEReader reads a text/event-stream body (the WHATWG server-sent events
// format) one event at a time, as MCP's Streamable HTTP sends replies: each
// event's data is one JSON-RPC message. Comment lines (starting with ':')
// are keep-alives and are counted, not returned. Lines end in LF or CRLF; a
// bare CR as the only line ending (legal, never seen from an MCP server) is
// not supported.
type SSEReader struct {
	br       *bufio.Reader
	max      int
	data     []byte
	event    []byte
	line     []byte
	hasData  bool
	tooLarge bool // the event being read is too large (and was reported)
	skipLine bool // the rest of a too-long line is still to be dropped
	// KeepAlives counts the comment lines read so far.
	KeepAlives int
}

// NewSSEReader reads events from r; an event whose data exceeds maxEvent
// bytes is skipped and reported as ErrFrameTooLarge.
func NewSSEReader(r io.Reader, maxEvent int) *SSEReader {
	return &SSEReader{br: bufio.NewReaderSize(r, 16<<10), max: maxEvent}
}

// Next returns the type ("message" when the event names none) and the data
// of the next event that has data. The slices are valid until the next
// call. io.EOF means the stream ended; an event cut off by the end of the
// stream is dropped, as the format says.
//
// An event whose data grows past the limit is reported as ErrFrameTooLarge
// as soon as it does, once, even if its line never ends; the following
// calls skip the rest of it.
func (s *SSEReader) Next() (event string, data []byte, err error) {
	for {
		line, tooLong, err := s.readLine()
		if err != nil {
			return "", nil, err
		}
		if tooLong {
			if s.tooLarge {
				continue // the event is already reported
			}
			s.tooLarge = true
			s.data = s.data[:0]
			return "", nil, ErrFrameTooLarge
		}
		if len(line) == 0 { // the blank line that dispatches an event
			if s.tooLarge || !s.hasData {
				s.reset()
				continue
			}
			event = "message" // the default, and what MCP servers name it: no allocation
			if len(s.event) > 0 && string(s.event) != event {
				event = string(s.event)
			}
			data = s.data
			s.reset()
			return event, data, nil
		}
		if line[0] == ':' {
			s.KeepAlives++
			continue
		}
		name, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "data":
			if s.tooLarge {
				continue
			}
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			s.hasData = true
			if len(s.data)+len(value) > s.max {
				s.tooLarge = true
				s.data = s.data[:0]
				return "", nil, ErrFrameTooLarge
			}
			s.data = append(s.data, value...)
		case "event":
			s.event = append(s.event[:0], value...)
		}
		// id and retry matter to reconnection, which rpcload does not do;
		// unknown fields are ignored, as the format says.
	}
}

func (s *SSEReader) reset() {
	s.data, s.event = s.data[:0], s.event[:0]
	s.hasData, s.tooLarge = false, false
}

// readLine returns the next line without its line ending. A line longer
// than the limit is reported as tooLong as soon as it passes the limit,
// without being kept (memory stays bounded); the next call reads the rest
// of it and drops it first.
func (s *SSEReader) readLine() (line []byte, tooLong bool, err error) {
	if s.skipLine {
		for {
			_, err := s.br.ReadSlice('\n')
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, false, err
			}
		}
		s.skipLine = false
	}
	s.line = s.line[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		if len(s.line)+len(chunk) > s.max+sseFieldSlack {
			s.line = s.line[:0]
			if errors.Is(err, bufio.ErrBufferFull) {
				s.skipLine = true // the rest of the line comes on the next call
			}
			if err == nil || errors.Is(err, bufio.ErrBufferFull) {
				return nil, true, nil
			}
		}
		switch {
		case err == nil:
			if len(s.line) == 0 {
				return trimEOL(chunk), false, nil
			}
			s.line = append(s.line, chunk...)
			return trimEOL(s.line), false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			s.line = append(s.line, chunk...)
		case errors.Is(err, io.EOF):
			return nil, false, io.EOF // a line without its end is not part of an event
		default:
			return nil, false, err
		}
	}
}

// sseFieldSlack is room for a field name ("data: ") on top of the limit.
const sseFieldSlack = 64

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}
