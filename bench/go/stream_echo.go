package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The bare grpc-js echo of bench/servers/echo-server.ts: every ClientEvent is answered with one
// ServerEvent, a copy of the template sent in the `x-echo-template-bin` metadata.
const echoMethod = "/parkway.bench.Echo/Chat"

var echoDesc = &grpc.StreamDesc{StreamName: "Chat", ServerStreams: true, ClientStreams: true}

// openEcho opens an echo stream answering with template (proto bytes of a ServerEvent).
func openEcho(ctx context.Context, cc *grpc.ClientConn, template []byte) (grpc.ClientStream, error) {
	md := metadata.Pairs("x-echo-template-bin", string(template))
	return cc.NewStream(metadata.NewOutgoingContext(ctx, md), echoDesc, echoMethod)
}

func decodeTemplate(o options) ([]byte, error) {
	if o.template == "" {
		return nil, errors.New("-template is required")
	}
	return base64.StdEncoding.DecodeString(o.template)
}

// streamEcho pipelines o.messages ClientEvents of o.text characters on each of o.streams echo
// streams, at most o.window in flight per stream, and times them from the first send to the last
// answer.
func streamEcho(o options) error {
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
	var received atomic.Int64
	errs := make(chan error, 2*o.streams)
	var wg sync.WaitGroup
	text := strings.Repeat("x", o.text)
	streams := make([]grpc.ClientStream, o.streams)
	for i := range streams {
		if streams[i], err = openEcho(ctx, conns[i%len(conns)], template); err != nil {
			return err
		}
	}
	start := time.Now()
	for i, stream := range streams {
		credit := make(chan struct{}, o.window)
		wg.Add(2)
		go func() { // sender
			defer wg.Done()
			id := fmt.Sprintf("echo-%d", i)
			for n := 0; n < o.messages; n++ {
				credit <- struct{}{}
				msg := &pb.ClientEvent{SessionId: id,
					Event: &pb.ClientEvent_UserMessage{UserMessage: &pb.UserMessage{Text: text}}}
				if err := stream.SendMsg(msg); err != nil {
					errs <- err
					return
				}
			}
			errs <- stream.CloseSend()
		}()
		go func() { // receiver
			defer wg.Done()
			for n := 0; n < o.messages; n++ {
				ev := &pb.ServerEvent{}
				if err := stream.RecvMsg(ev); err != nil {
					if err != io.EOF && status.Code(err) != codes.Canceled {
						errs <- err
					}
					return
				}
				received.Add(1)
				<-credit
			}
		}()
	}
	wg.Wait()
	w := finished(received.Load(), start)
	close(errs)
	for e := range errs {
		if e != nil {
			return e
		}
	}
	emit(struct {
		Mode    string `json:"mode"`
		Streams int    `json:"streams"`
		work
		TemplateBytes int `json:"templateBytes"`
	}{"stream-echo", o.streams, w, len(template)})
	return nil
}
