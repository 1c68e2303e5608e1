package parkway_test

import (
	"testing"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"

	parkway "github.com/parkway-dev/parkway/clients/go"
)

// TestWatchSend drives a reply without a bidi stream: Send applies the message (once per request
// id), Watch streams its events, and ListMessages returns the transcript newest first.
func TestWatchSend(t *testing.T) {
	t.Parallel()
	env := startEnv(t, []map[string]any{{"id": "assistant"}})
	env.play(t, `{"turns": [{"text": "Hello over Watch."}]}`)
	ctx := testContext(t)
	info, err := env.client.CreateSession(ctx, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	req := &pb.SendRequest{
		SessionId: info.GetId(),
		RequestId: "hello-1",
		Input:     &pb.SendRequest_UserMessage{UserMessage: &pb.UserMessage{Text: "hi"}},
	}
	ack, err := env.client.Send(ctx, req)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if ack.GetRequestId() != "hello-1" || ack.GetReplyId() == "" {
		t.Errorf("ack = %v", ack)
	}
	if again, err := env.client.Send(ctx, req); err != nil || again.GetReplyId() != ack.GetReplyId() {
		t.Errorf("retry = %v, %v; want the same acknowledgement", again, err)
	}
	var events []*parkway.Event
	for ev, err := range env.client.Watch(ctx, info.GetId(), 0) {
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		events = append(events, ev)
		if ev.Kind() == parkway.KindReplyEnd {
			break
		}
	}
	if got := text(events); got != "Hello over Watch." {
		t.Errorf("text = %q", got)
	}
	page, err := env.client.ListMessages(ctx, &pb.ListMessagesRequest{SessionId: info.GetId()})
	if err != nil {
		t.Fatalf("ListMessages: %v", err)
	}
	msgs := page.GetMessages()
	if len(msgs) != 2 || msgs[0].GetId() != ack.GetReplyId() || msgs[1].GetRole() != pb.Role_ROLE_USER {
		t.Errorf("messages = %v", msgs)
	}
}
