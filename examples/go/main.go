// Command approve is a small approval frontend for Parkway: it sends one message to an agent, prints
// the reply as it streams, approves every tool call that needs confirmation (accepting its suggested
// rule with -remember), answers every AskUser question with its first option, and prints the final
// answer.
//
//	go run . -addr 127.0.0.1:50051 -agent assistant -remember "create notes.txt"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	parkway "github.com/parkway-dev/parkway/clients/go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "the Parkway server, HOST:PORT")
	agent := flag.String("agent", "assistant", "the agent to talk to")
	remember := flag.Bool("remember", false, "accept the suggested rule with each approval")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *agent, strings.Join(flag.Args(), " "), *remember); err != nil {
		fmt.Fprintln(os.Stderr, "approve:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, agent, message string, remember bool) error {
	client, err := parkway.NewClient(addr)
	if err != nil {
		return err
	}
	defer client.Close()
	info, err := client.CreateSession(ctx, agent)
	if err != nil {
		return err
	}
	sess, err := client.Attach(ctx, info.GetId())
	if err != nil {
		return err
	}
	defer sess.Close()
	fmt.Println("session", info.GetId())

	var answer strings.Builder // the latest text block
	events := sess.Send(ctx, message)
	for {
		var waiting []*parkway.Event // REQUIRE_* events of this stretch
		for ev, err := range events {
			if err != nil {
				return err
			}
			switch ev.Kind() {
			case parkway.KindTextBlockStart:
				answer.Reset()
			case parkway.KindTextBlockDelta:
				fmt.Print(ev.Delta())
				answer.WriteString(ev.Delta())
			case parkway.KindTextBlockEnd:
				fmt.Println()
			case parkway.KindRequireUserConfirm, parkway.KindRequireExternalExecution:
				waiting = append(waiting, ev)
			case parkway.KindReplyEnd:
				fmt.Printf("final answer (%s): %s\n", ev.GetReplyEnd().GetFinishedReason(), answer.String())
				return nil
			}
		}
		for _, ev := range waiting { // the reply parked: answer what it waits for
			for _, call := range ev.ToolCalls() {
				if err := respond(ctx, sess, ev.Kind(), call, remember); err != nil {
					return err
				}
			}
		}
		events = sess.UntilSettled(ctx)
	}
}

func respond(ctx context.Context, sess *parkway.Session, kind parkway.Kind, call *parkway.ToolCall, remember bool) error {
	switch {
	case kind == parkway.KindRequireUserConfirm:
		var opts []parkway.ConfirmOption
		if remember {
			opts = append(opts, parkway.WithSuggestedRules())
		}
		fmt.Printf("approved %s %s (remember: %t)\n", call.GetName(), call.GetInput(), remember)
		return sess.Confirm(ctx, call, opts...)
	case call.GetAskUser() != nil:
		var answers []*parkway.AskUserAnswer
		for _, q := range call.GetAskUser().GetQuestions() {
			first := q.GetOptions()[0].GetLabel()
			fmt.Printf("asked %q, answered %s\n", q.GetQuestion(), first)
			answers = append(answers, parkway.Selected(q.GetQuestion(), first))
		}
		return sess.Answer(ctx, call, answers...)
	}
	return fmt.Errorf("this frontend cannot run the external tool %s", call.GetName())
}
