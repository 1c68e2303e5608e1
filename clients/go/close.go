package parkway

import (
	"time"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// closeGrace is how long [Session.Close] waits for the server to end a half-closed stream before it
// cancels the stream. The server ends a half-closed stream at once when the session runs no reply;
// a cancel resets the stream (RST_STREAM), and HTTP/2 servers close the connection of a client that
// resets streams faster than their rate limit (about 1,000 at once, then 33 a second), failing or
// moving every other call on it.
const closeGrace = time.Second

// Close ends the stream and the session's reconnection; reading and sending then return
// ErrSessionClosed at once. The stream is half-closed, which the server ends at once when the
// session runs no reply; Close waits for that end, and cancels a stream still open after one second
// (a reply running). A cancel resets the stream, and HTTP/2 servers close the connection of a
// client that resets streams faster than their rate limit (about 1,000 at once, then 33 a second),
// which fails or moves every other call on it; closing gracefully keeps a program that opens and
// closes many sessions under that limit. A session without a stream (reconnecting, or ended) is
// closed at once. Close may be called more than once, from any goroutine; every call returns once
// the session has ended.
func (s *Session) Close() error {
	s.closeOnce.Do(s.close)
	return nil
}

func (s *Session) close() {
	s.mu.Lock()
	s.closed = true
	stream := s.stream
	s.broadcast()
	s.mu.Unlock()
	if stream != nil {
		// A Send blocked on a full flow-control window holds sendMu until the cancel below ends it,
		// so the half-close waits on its own goroutine.
		go s.halfClose(stream)
		timer := time.NewTimer(closeGrace)
		select {
		case <-s.done:
		case <-timer.C:
		}
		timer.Stop()
	}
	s.cancel()
	<-s.done
}

// halfClose ends the sending side of stream (CloseSend); no input is sent after it.
func (s *Session) halfClose(stream pb.AgentService_ChatClient) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.sendClosed = true
	_ = stream.CloseSend()
}
