package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
	"google.golang.org/grpc"
)

// The idle modes run in three phases, each ended by a line on stdin from the runner, which
// measures the server's memory in between: "created" (sessions exist, nothing attached),
// "attached" (o.streams streams attached and acknowledged, then idle), and exit.

// inParallel runs fn(i) for i < n on at most `width` goroutines; returns the first error.
func inParallel(n, width int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for w := 0; w < width; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func waitLine(in *bufio.Reader) {
	_, _ = in.ReadString('\n')
}

// idleParkway creates o.streams sessions, then attaches one Chat stream to each and holds them.
func idleParkway(o options) error {
	conns, err := dial(o.addr, o.conns)
	if err != nil {
		return err
	}
	defer closeAll(conns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := make([]string, o.streams)
	err = inParallel(o.streams, 32, func(i int) error {
		client := pb.NewAgentServiceClient(conns[i%len(conns)])
		res, err := client.CreateSession(ctx, &pb.CreateSessionRequest{AgentId: o.agent})
		if err != nil {
			return fmt.Errorf("create session: %w", err)
		}
		ids[i] = res.GetSession().GetId()
		return nil
	})
	if err != nil {
		return err
	}
	in := bufio.NewReader(os.Stdin)
	emit(map[string]any{"phase": "created", "sessions": len(ids)})
	waitLine(in)
	start := time.Now()
	held := make([]*attached, o.streams)
	err = inParallel(o.streams, 64, func(i int) error {
		client := pb.NewAgentServiceClient(conns[i%len(conns)])
		s, err := attachTo(ctx, client, ids[i])
		held[i] = s
		return err
	})
	if err != nil {
		return err
	}
	emit(map[string]any{"phase": "attached", "streams": len(held), "seconds": time.Since(start).Seconds()})
	waitLine(in)
	return nil
}

// idleEcho opens o.streams echo streams, sends one ClientEvent on each, waits for its answer, and
// holds them.
func idleEcho(o options) error {
	template, err := decodeTemplate(o)
	if err != nil {
		return err
	}
	conns, err := dial(o.addr, o.conns)
	if err != nil {
		return err
	}
	defer closeAll(conns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := bufio.NewReader(os.Stdin)
	emit(map[string]any{"phase": "created", "sessions": 0})
	waitLine(in)
	start := time.Now()
	held := make([]grpc.ClientStream, o.streams)
	err = inParallel(o.streams, 64, func(i int) error {
		stream, err := openEcho(ctx, conns[i%len(conns)], template)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("idle-%d", i)
		hello := &pb.ClientEvent{SessionId: id, RequestId: "attach-" + id,
			Event: &pb.ClientEvent_Attach{Attach: &pb.Attach{SessionId: id}}}
		if err := stream.SendMsg(hello); err != nil {
			return err
		}
		held[i] = stream
		return stream.RecvMsg(&pb.ServerEvent{})
	})
	if err != nil {
		return err
	}
	emit(map[string]any{"phase": "attached", "streams": len(held), "seconds": time.Since(start).Seconds()})
	waitLine(in)
	return nil
}
