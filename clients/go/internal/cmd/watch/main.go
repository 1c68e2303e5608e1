// Command watch follows one Parkway session with the Go client and prints its events.
//
// Usage (from clients/go): go run ./internal/cmd/watch ADDR SESSION
//
// It attaches to SESSION on the server at ADDR from seq 0 (the session re-attaches by itself after
// a broken stream, resuming after the last seq it received) and prints each event as one JSON line
// {"seq": N, "kind": "...", "replayed": bool} until the first REPLY_END, then exits 0. It exits 1
// with the error on stderr when the attach fails or the stream ends for good first, and 2 on a
// wrong command line. The Python failover test (clients/python/tests/test_cluster_failover.py) runs
// it against one node while another dies.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	parkway "github.com/parkway-dev/parkway/clients/go"
)

// line is what is printed for each event.
type line struct {
	Seq      uint64 `json:"seq"`
	Kind     string `json:"kind"`
	Replayed bool   `json:"replayed"`
}

// attachTimeout bounds the attach handshake; the stream itself lives until REPLY_END.
const attachTimeout = 15 * time.Second

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: watch ADDR SESSION")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := watch(ctx, os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "watch:", err)
		stop()
		os.Exit(1)
	}
}

func watch(ctx context.Context, addr, sessionID string) error {
	client, err := parkway.NewClient(addr)
	if err != nil {
		return err
	}
	defer client.Close()
	attachCtx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	session, err := client.Attach(attachCtx, sessionID)
	if err != nil {
		return fmt.Errorf("attach %s on %s: %w", sessionID, addr, err)
	}
	defer session.Close()
	out := json.NewEncoder(os.Stdout)
	for ev, err := range session.Events(ctx) {
		if err != nil {
			return err
		}
		if err := out.Encode(line{Seq: ev.GetSeq(), Kind: string(ev.Kind()), Replayed: ev.GetReplayed()}); err != nil {
			return err
		}
		if ev.Kind() == parkway.KindReplyEnd {
			return nil
		}
	}
	return nil
}
