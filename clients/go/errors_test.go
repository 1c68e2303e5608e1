package parkway_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	parkway "github.com/parkway-dev/parkway/clients/go"
)

// TestErrors checks the errors the client makes itself: they name the client and wrap their cause,
// so errors.Is and errors.As see through them.
func TestErrors(t *testing.T) {
	t.Parallel()

	t.Run("the server ends the stream", func(t *testing.T) {
		t.Parallel()
		_, client := startFakeChat(t, hangUp)
		ctx := testContext(t)
		sess, err := client.Attach(ctx, "s1")
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		defer sess.Close()
		_, err = sess.Next(ctx)
		if !errors.Is(err, io.EOF) || !strings.HasPrefix(err.Error(), "parkway: ") {
			t.Errorf("Next after the server ended the stream = %v, want a parkway error wrapping io.EOF", err)
		}
		if err := sess.Interrupt(ctx); !errors.Is(err, io.EOF) {
			t.Errorf("Interrupt after the server ended the stream = %v, want the session's error", err)
		}
	})

	t.Run("metadata a Struct cannot hold", func(t *testing.T) {
		t.Parallel()
		fake, client := startFakeChat(t, acknowledge)
		ctx := testContext(t)
		sess, err := client.Attach(ctx, "s1")
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		defer sess.Close()
		<-fake.received // the attach
		err = sess.SubmitResult(ctx, &parkway.ToolCall{Id: "call_1", Name: "Lookup"},
			parkway.Result{Output: "3 rows", Metadata: map[string]any{"rows": make(chan int)}})
		if err == nil || !strings.HasPrefix(err.Error(), "parkway: ") || errors.Unwrap(err) == nil {
			t.Errorf("SubmitResult(unrepresentable metadata) = %v, want a parkway error wrapping the cause", err)
		}
		if len(fake.received) != 0 {
			t.Errorf("the server received the refused result")
		}
	})

	t.Run("after Close", func(t *testing.T) {
		t.Parallel()
		_, client := startFakeChat(t, acknowledge)
		ctx := testContext(t)
		sess, err := client.Attach(ctx, "s1")
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		if err := sess.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := sess.Next(ctx); !errors.Is(err, parkway.ErrSessionClosed) {
			t.Errorf("Next after Close = %v, want ErrSessionClosed", err)
		}
		if err := sess.Interrupt(ctx); !errors.Is(err, parkway.ErrSessionClosed) {
			t.Errorf("Interrupt after Close = %v, want ErrSessionClosed", err)
		}
	})
}
