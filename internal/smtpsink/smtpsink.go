// Package smtpsink is an SMTP server for tests: it listens on the
// loopback interface only (127.0.0.1, a port the system picks), accepts
// every message and keeps it, envelope and data, so that a test can send
// with the real git send-email and read what a server received. It speaks
// the part of RFC 5321 that a client without authentication or TLS uses:
// EHLO/HELO, MAIL, RCPT, DATA (dot-unstuffed), RSET, NOOP, QUIT.
package smtpsink

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

// Message is one message the sink received.
type Message struct {
	From string   // MAIL FROM, without angle brackets
	To   []string // RCPT TO, in order
	Data string   // the message, headers and body, lines ending in "\n"
}

// Sink is a running SMTP server.
type Sink struct {
	Host, Port string // where it listens: 127.0.0.1 and its port
	ln         net.Listener
	mu         sync.Mutex
	msgs       []Message
	wg         sync.WaitGroup
}

// Start starts a sink on 127.0.0.1, closed when the test ends.
func Start(t testing.TB) *Sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening on the loopback interface: %v", err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s := &Sink{Host: host, Port: port, ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// Messages returns the messages received so far, in order.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

func (s *Sink) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.session(c)
		}()
	}
}

// session speaks SMTP with one client.
func (s *Sink) session(c net.Conn) {
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) bool {
		fmt.Fprintf(w, format+"\r\n", args...)
		return w.Flush() == nil
	}
	if !reply("220 kpatch-sink ESMTP") {
		return
	}
	var cur Message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		arg := func(prefix string) string {
			v := line[min(len(prefix), len(line)):]
			if i := strings.IndexByte(v, '>'); i >= 0 {
				v = v[:i+1]
			}
			return strings.Trim(strings.TrimSpace(v), "<>")
		}
		switch verb {
		case "EHLO":
			reply("250-kpatch-sink")
			reply("250 8BITMIME")
		case "HELO":
			reply("250 kpatch-sink")
		case "MAIL":
			cur = Message{From: arg("MAIL FROM:")}
			reply("250 OK")
		case "RCPT":
			cur.To = append(cur.To, arg("RCPT TO:"))
			reply("250 OK")
		case "DATA":
			if !reply("354 end with <CRLF>.<CRLF>") {
				return
			}
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				l = strings.TrimRight(l, "\r\n")
				if l == "." {
					break
				}
				b.WriteString(strings.TrimPrefix(l, ".") + "\n")
			}
			cur.Data = b.String()
			s.mu.Lock()
			s.msgs = append(s.msgs, cur)
			s.mu.Unlock()
			cur = Message{}
			reply("250 OK queued")
		case "RSET":
			cur = Message{}
			reply("250 OK")
		case "NOOP":
			reply("250 OK")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 command not implemented")
		}
	}
}
