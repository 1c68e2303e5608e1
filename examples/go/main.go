// Command approve is a small approval frontend for Parkway: it sends one message to an agent, prints
// the reply as it streams, approves every tool call that needs confirmation (accepting its suggested
// rules with -remember), answers every AskUser question with its first option, and prints the final
// answer (the last text block) with how the reply finished, as the TypeScript and Python examples do:
//
//	[final] Created notes.txt. (completed)
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
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
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
	fmt.Println("[session]", info.GetId())

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
				fmt.Printf("[final] %s (%s)\n", answer.String(), finishedReason(ev.GetReplyEnd().GetFinishedReason()))
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
		rules := "none"
		if remember && len(call.GetSuggestedRules()) > 0 {
			opts = append(opts, parkway.WithSuggestedRules())
			var shown []string
			for _, r := range call.GetSuggestedRules() {
				shown = append(shown, ruleString(r))
			}
			rules = strings.Join(shown, ", ")
		}
		fmt.Printf("[approve] %s %s (rules: %s)\n", call.GetName(), call.GetInput(), rules)
		return sess.Confirm(ctx, call, opts...)
	case call.GetAskUser() != nil:
		var answers []*parkway.AskUserAnswer
		for _, q := range call.GetAskUser().GetQuestions() {
			first := q.GetOptions()[0].GetLabel()
			fmt.Printf("[ask] %s -> %s\n", q.GetQuestion(), first)
			answers = append(answers, parkway.Selected(q.GetQuestion(), first))
		}
		return sess.Answer(ctx, call, answers...)
	}
	return fmt.Errorf("this frontend cannot run the external tool %s", call.GetName())
}

// finishedReason is how a reply finished, as the other examples print it: the enum's name without
// its prefix, in lower case ("completed", "interrupted", …).
func finishedReason(r pb.FinishedReason) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "FINISHED_REASON_"))
}

// ruleString is a rule in its display form, e.g. Bash(touch:*).
func ruleString(r *parkway.Rule) string {
	if r.RuleContent == nil {
		return r.GetToolName()
	}
	return fmt.Sprintf("%s(%s)", r.GetToolName(), r.GetRuleContent())
}
