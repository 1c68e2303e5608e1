package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// attached is one Chat stream attached to a new session.
type attached struct {
	id     string
	stream grpc.BidiStreamingClient[pb.ClientEvent, pb.ServerEvent]
}

// attachNew creates a session of o.agent and attaches a Chat stream to it, waiting for the ack.
func attachNew(ctx context.Context, cc *grpc.ClientConn, agent string) (*attached, error) {
	client := pb.NewAgentServiceClient(cc)
	created, err := client.CreateSession(ctx, &pb.CreateSessionRequest{AgentId: agent})
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return attachTo(ctx, client, created.GetSession().GetId())
}

// attachTo opens a Chat stream on an existing session and waits for the attach's ack.
func attachTo(ctx context.Context, client pb.AgentServiceClient, id string) (*attached, error) {
	stream, err := client.Chat(ctx)
	if err != nil {
		return nil, err
	}
	hello := &pb.ClientEvent{SessionId: id, RequestId: "attach-" + id,
		Event: &pb.ClientEvent_Attach{Attach: &pb.Attach{SessionId: id}}}
	if err := stream.Send(hello); err != nil {
		return nil, err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			return nil, fmt.Errorf("attach %s: %w", id, err)
		}
		if ack := ev.GetInputAck(); ack != nil {
			if ack.GetStatus().GetCode() != 0 {
				return nil, fmt.Errorf("attach %s refused: %s", id, ack.GetStatus().GetMessage())
			}
			return &attached{id: id, stream: stream}, nil
		}
	}
}

// streamResult is what stream-parkway prints.
type streamResult struct {
	Mode     string `json:"mode"`
	Sessions int    `json:"sessions"`
	work
	Replies int64 `json:"replies"`
	// Per session: milliseconds from the start to its first TEXT_BLOCK_DELTA.
	FirstDeltaMs []float64 `json:"firstDeltaMs"`
	// One TEXT_BLOCK_DELTA as received (proto bytes, base64), for the echo's template.
	SampleDelta string `json:"sampleDelta"`
	DeltaBytes  int    `json:"deltaBytes"`
	DeltaText   int    `json:"deltaText"`
}

// streamParkway runs o.streams sessions at once, each sending a user message as soon as its
// previous reply ended, o.replies times, and counts the TEXT_BLOCK_DELTA events received from the
// first send to the last REPLY_END.
func streamParkway(o options) error {
	conns, err := dial(o.addr, o.conns)
	if err != nil {
		return err
	}
	defer closeAll(conns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sessions := make([]*attached, o.streams)
	for i := range sessions {
		if sessions[i], err = attachNew(ctx, conns[i%len(conns)], o.agent); err != nil {
			return err
		}
	}
	var deltas, replies atomic.Int64
	var sample atomic.Pointer[pb.ServerEvent]
	firsts := make([]float64, len(sessions))
	errs := make(chan error, len(sessions))
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conversation{s: s, start: start, deltas: &deltas, replies: &replies, sample: &sample}
			errs <- c.run(o.replies)
			firsts[i] = c.firstMs
		}()
	}
	wg.Wait()
	res := streamResult{Mode: "stream-parkway", Sessions: o.streams,
		work: finished(deltas.Load(), start), Replies: replies.Load(), FirstDeltaMs: firsts}
	close(errs)
	for e := range errs {
		if e != nil {
			return e
		}
	}
	if ev := sample.Load(); ev != nil {
		raw, _ := proto.Marshal(ev)
		res.SampleDelta = base64.StdEncoding.EncodeToString(raw)
		res.DeltaBytes = len(raw)
		res.DeltaText = len(ev.GetTextBlockDelta().GetDelta())
	}
	emit(res)
	return nil
}

// conversation is one session's part of the run.
type conversation struct {
	s       *attached
	start   time.Time
	deltas  *atomic.Int64
	replies *atomic.Int64
	sample  *atomic.Pointer[pb.ServerEvent]
	firstMs float64
}

// run sends n user messages, each after the previous reply's REPLY_END.
func (c *conversation) run(n int) error {
	defer func() { _ = c.s.stream.CloseSend() }()
	for k := 0; k < n; k++ {
		msg := &pb.ClientEvent{SessionId: c.s.id, RequestId: fmt.Sprintf("%s-m%d", c.s.id, k),
			Event: &pb.ClientEvent_UserMessage{UserMessage: &pb.UserMessage{Text: "stream"}}}
		if err := c.s.stream.Send(msg); err != nil {
			return err
		}
		for {
			ev, err := c.s.stream.Recv()
			if err != nil {
				return fmt.Errorf("session %s: %w", c.s.id, err)
			}
			if ev.GetTextBlockDelta() != nil {
				c.deltas.Add(1)
				if c.firstMs == 0 {
					c.firstMs = float64(time.Since(c.start).Microseconds()) / 1000
				}
				if c.sample.Load() == nil {
					c.sample.CompareAndSwap(nil, ev)
				}
			}
			if ack := ev.GetInputAck(); ack != nil && ack.GetStatus().GetCode() != 0 {
				return fmt.Errorf("session %s: input refused: %s", c.s.id, ack.GetStatus().GetMessage())
			}
			if end := ev.GetReplyEnd(); end != nil {
				if end.GetFinishedReason() != pb.FinishedReason_FINISHED_REASON_COMPLETED {
					return fmt.Errorf("session %s: reply ended %s", c.s.id, end.GetFinishedReason())
				}
				c.replies.Add(1)
				break
			}
		}
	}
	return nil
}
