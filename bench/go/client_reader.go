package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// readResult is one line of read-client / read-stub: o.replies whole replies read back to back.
type readResult struct {
	// User + system CPU seconds of this process (getrusage) while the replies were read.
	CPU     float64 `json:"cpu_s"`
	Wall    float64 `json:"wall_s"`
	Deltas  int64   `json:"deltas"`
	Replies int     `json:"replies"`
}

// cpuSeconds is this process's user + system CPU time so far.
func cpuSeconds() float64 {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return float64(r.Utime.Nano()+r.Stime.Nano()) / 1e9
}

// readReplies is the reader of the client rows (bench/suites/clients.ts). Once attached it reads
// one reply (warm-up) and prints {"ready": true}; then each line on stdin runs o.replies replies
// back to back and prints a readResult. It returns when stdin closes.
//
// read-client: the Go client (clients/go); NewClient, CreateSession, Attach, then per reply
// `for ev, err := range session.Send(ctx, "stream")` (the message sent and its input_ack awaited,
// then the events until REPLY_END), counting events of kind text_block_delta.
// read-stub: the generated stubs (clients/go/gen) on a grpc.NewClient connection; CreateSession,
// one Chat stream, the attach sent and its input_ack received; per reply the user message is sent
// and stream.Recv() repeats until REPLY_END (the message's input_ack is one of the events
// received), counting events whose TextBlockDelta is set.
func readReplies(o options, viaClient bool) error {
	ctx := context.Background()
	var reply func() (int64, error)
	if viaClient {
		client, err := parkway.NewClient(o.addr)
		if err != nil {
			return err
		}
		defer client.Close()
		created, err := client.CreateSession(ctx, o.agent)
		if err != nil {
			return err
		}
		session, err := client.Attach(ctx, created.GetId())
		if err != nil {
			return err
		}
		defer session.Close()
		reply = func() (int64, error) {
			var deltas int64
			for ev, err := range session.Send(ctx, "stream") {
				if err != nil {
					return deltas, err
				}
				if ev.Kind() == parkway.KindTextBlockDelta {
					deltas++
				}
			}
			return deltas, nil
		}
	} else {
		conns, err := dial(o.addr, 1)
		if err != nil {
			return err
		}
		defer closeAll(conns)
		s, err := attachNew(ctx, conns[0], o.agent)
		if err != nil {
			return err
		}
		defer func() { _ = s.stream.CloseSend() }()
		sent := 0
		reply = func() (int64, error) {
			sent++
			msg := &pb.ClientEvent{SessionId: s.id, RequestId: fmt.Sprintf("%s-m%d", s.id, sent),
				Event: &pb.ClientEvent_UserMessage{UserMessage: &pb.UserMessage{Text: "stream"}}}
			if err := s.stream.Send(msg); err != nil {
				return 0, err
			}
			var deltas int64
			for {
				ev, err := s.stream.Recv()
				if err != nil {
					return deltas, err
				}
				if ev.GetTextBlockDelta() != nil {
					deltas++
				} else if ev.GetReplyEnd() != nil {
					return deltas, nil
				}
			}
		}
	}
	if _, err := reply(); err != nil { // warm-up
		return err
	}
	emit(map[string]bool{"ready": true})
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		if err == io.EOF && strings.TrimSpace(line) == "" {
			return nil
		} else if err != nil && err != io.EOF {
			return err
		}
		res := readResult{Replies: o.replies}
		c0, t0 := cpuSeconds(), time.Now()
		for k := 0; k < o.replies; k++ {
			n, err := reply()
			if err != nil {
				return err
			}
			res.Deltas += n
		}
		res.Wall, res.CPU = time.Since(t0).Seconds(), cpuSeconds()-c0
		emit(res)
	}
}
