package hostile

import (
	"bufio"
	"crypto/sha1" //nolint:gosec // RFC 6455 names SHA-1 for the accept key
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
)

// The WebSocket side is written by hand, handshake included, so that the
// server can write any frame it likes: a length of 2^62, a message that is
// never finished, a message in thousands of frames.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// WebSocket opcodes.
const (
	opCont  = 0x0
	opText  = 0x1
	opClose = 0x8
)

// wsFrameHead appends an unmasked server frame header.
func wsFrameHead(dst []byte, fin bool, op byte, n uint64) []byte {
	b := op
	if fin {
		b |= 0x80
	}
	dst = append(dst, b)
	switch {
	case n <= 125:
		dst = append(dst, byte(n))
	case n <= 0xffff:
		dst = append(dst, 126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 127)
		dst = binary.BigEndian.AppendUint64(dst, n)
	}
	return dst
}

// wsMessage is one whole text message in one frame.
func wsMessage(msg []byte) []byte {
	return append(wsFrameHead(nil, true, opText, uint64(len(msg))), msg...)
}

// wsUpgrade reads the upgrade request and accepts it.
func wsUpgrade(br *bufio.Reader, c net.Conn) error {
	key := ""
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "GET ") {
		return errors.New("hostile: not a WebSocket upgrade")
	}
	for total := 0; ; {
		h, err := br.ReadString('\n')
		total += len(h)
		if err != nil || total > 64<<10 {
			return errors.New("hostile: bad upgrade request")
		}
		h = strings.TrimSpace(h)
		if h == "" {
			break
		}
		if name, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(strings.TrimSpace(name), "Sec-WebSocket-Key") {
			key = strings.TrimSpace(v)
		}
	}
	sum := sha1.Sum([]byte(key + wsGUID)) //nolint:gosec // as RFC 6455 says
	_, err = c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"))
	return err
}

var errTooLong = errors.New("hostile: request frame too long")

// wsReadMessage reads the next data message from the client (masked
// frames), skipping control frames; a message over maxRequest is an error.
func wsReadMessage(br *bufio.Reader, msg []byte) ([]byte, error) {
	msg = msg[:0]
	var head [14]byte
	for {
		if _, err := io.ReadFull(br, head[:2]); err != nil {
			return nil, err
		}
		fin, op := head[0]&0x80 != 0, head[0]&0x0f
		masked := head[1]&0x80 != 0
		n := uint64(head[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(br, head[:2]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(head[:2]))
		case 127:
			if _, err := io.ReadFull(br, head[:8]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(head[:8])
		}
		var key [4]byte
		if masked {
			if _, err := io.ReadFull(br, key[:]); err != nil {
				return nil, err
			}
		}
		if n > maxRequest || uint64(len(msg))+n > maxRequest {
			return nil, errTooLong
		}
		start := len(msg)
		msg = append(msg, make([]byte, n)...)
		if _, err := io.ReadFull(br, msg[start:]); err != nil {
			return nil, err
		}
		if masked {
			for i := range msg[start:] {
				msg[start+i] ^= key[i&3]
			}
		}
		switch {
		case op == opClose:
			return nil, io.EOF
		case op >= 0x8: // ping, pong: not answered
			msg = msg[:start]
		case fin:
			return msg, nil
		}
	}
}

// serveWS is a WebSocket server that misbehaves after the handshake.
func (s *Server) serveWS(c net.Conn) {
	br := bufio.NewReader(c)
	if wsUpgrade(br, c) != nil {
		return
	}
	if s.mode == NeverRead {
		<-s.quit
		return
	}
	var mu sync.Mutex // the replies and a flood take turns
	if s.mode == Flood {
		go func() {
			var msg, buf []byte
			for n := 0; n < floodMax; {
				select {
				case <-s.quit:
					return
				default:
				}
				buf = buf[:0]
				for range 64 {
					msg = floodMessage(msg[:0], n)
					buf = append(buf, wsMessage(msg)...)
					n++
				}
				mu.Lock()
				_, err := c.Write(buf)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	var in []byte
	for {
		m, err := wsReadMessage(br, in)
		if err != nil {
			return
		}
		in = m
		q, ok := parse(m)
		if !ok {
			continue
		}
		s.countRequest()
		mu.Lock()
		err = s.wsAnswer(c, q)
		mu.Unlock()
		if err != nil {
			return
		}
	}
}

// wsAnswer answers one request as the mode says.
func (s *Server) wsAnswer(c net.Conn, q request) error {
	reply := okReply(q.ID)
	switch s.mode {
	case Reset:
		resetConn(c)
		return errDone
	case HugeReply:
		pre := hugePrefix(q.ID)
		if _, err := c.Write(append(wsFrameHead(nil, true, opText, HugeSize), pre...)); err != nil {
			return err
		}
		if err := writeFiller(c, int64(HugeSize-len(pre)-len(hugeSuffix)), s.quit); err != nil {
			return err
		}
		_, err := c.Write(hugeSuffix)
		return err
	case EndlessLine:
		// A message that is never finished: its first frame, then
		// continuation frames without FIN until the connection ends.
		pre := hugePrefix(q.ID)
		if _, err := c.Write(append(wsFrameHead(nil, false, opText, uint64(len(pre))), pre...)); err != nil {
			return err
		}
		frame := append(wsFrameHead(nil, false, opCont, uint64(len(filler))), filler...)
		for {
			select {
			case <-s.quit:
				return errDone
			default:
			}
			if _, err := c.Write(frame); err != nil {
				return err
			}
		}
	case HugeLength:
		if _, err := c.Write(append(wsFrameHead(nil, true, opText, HugeLengthValue), hugePrefix(q.ID)...)); err == nil {
			<-s.quit
		}
		return errDone
	case Fragments:
		body := fragmentedReply(q.ID)
		var out []byte
		for i, b := range body {
			op := byte(opCont)
			if i == 0 {
				op = opText
			}
			out = append(wsFrameHead(out, i == len(body)-1, op, 1), b)
		}
		_, err := c.Write(out)
		return err
	case Slowloris:
		return trickle(c, wsMessage(reply), s.quit)
	case Twice:
		one := wsMessage(reply)
		_, err := c.Write(append(one, one...))
		return err
	}
	_, err := c.Write(wsMessage(reply))
	return err
}
