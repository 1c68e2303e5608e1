// Command parkway-load generates load for the Parkway benchmarks (bench/): streamed text deltas
// through Parkway sessions, the bare grpc-js pipelined echo with the same message size, and idle
// attached streams for both, and the Go reader of the client rows (whole replies read through the
// Go client or the raw generated stubs, with this process's CPU time). It prints one JSON object per phase on stdout; the TypeScript runner
// (bench/run.ts) reads them. grpc-js clients saturate before grpc-js servers do, so the load comes
// from Go.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

type options struct {
	addr     string
	streams  int
	conns    int
	replies  int
	messages int
	window   int
	template string
	text     int
	agent    string
}

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:50051", "server HOST:PORT")
	flag.IntVar(&o.streams, "streams", 1, "sessions (parkway) or streams (echo)")
	flag.IntVar(&o.conns, "conns", 1, "HTTP/2 connections the streams are spread over")
	flag.IntVar(&o.replies, "replies", 1, "parkway, read-*: replies each session runs to their end")
	flag.IntVar(&o.messages, "messages", 1000, "echo: messages each stream sends and gets back")
	flag.IntVar(&o.window, "window", 256, "echo: messages in flight per stream")
	flag.StringVar(&o.template, "template", "", "echo: base64 ServerEvent the echo answers with")
	flag.IntVar(&o.text, "text", 8, "echo: characters of text per ClientEvent")
	flag.StringVar(&o.agent, "agent", "bench", "parkway: agent id of the sessions")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: parkway-load [flags] stream-parkway|stream-echo|idle-parkway|idle-echo|read-client|read-stub")
		flag.PrintDefaults()
	}
	flag.Parse()
	var err error
	switch flag.Arg(0) {
	case "stream-parkway":
		err = streamParkway(o)
	case "stream-echo":
		err = streamEcho(o)
	case "idle-parkway":
		err = idleParkway(o)
	case "idle-echo":
		err = idleEcho(o)
	case "read-client":
		err = readReplies(o, true)
	case "read-stub":
		err = readReplies(o, false)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parkway-load:", err)
		os.Exit(1)
	}
}

// emit prints one JSON line for the runner.
func emit(v any) {
	line, _ := json.Marshal(v)
	fmt.Println(string(line))
}

// dial opens n client connections to addr.
func dial(addr string, n int) ([]*grpc.ClientConn, error) {
	conns := make([]*grpc.ClientConn, 0, n)
	for i := 0; i < max(n, 1); i++ {
		cc, err := grpc.NewClient(addr,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
		if err != nil {
			return nil, err
		}
		conns = append(conns, cc)
	}
	return conns, nil
}

func closeAll(conns []*grpc.ClientConn) {
	for _, cc := range conns {
		_ = cc.Close()
	}
}

// work is a fixed amount of streamed messages received, and how long it took from the first
// send to the last receipt.
type work struct {
	Count   int64   `json:"count"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate"`
}

func finished(count int64, start time.Time) work {
	secs := time.Since(start).Seconds()
	return work{Count: count, Seconds: secs, Rate: float64(count) / secs}
}
