// Package parkway is the Go client for Parkway, a gRPC server that hosts tool-using LLM agents with
// people in the loop. The generated messages and service stubs for the parkway.v1 contract live in
// github.com/parkway-dev/parkway/clients/go/gen/parkway/v1; this package wraps them in a small,
// idiomatic API:
//
//	client, err := parkway.NewClient("127.0.0.1:50051", parkway.WithToken(token))
//	info, err := client.CreateSession(ctx, "assistant")
//	sess, err := client.Attach(ctx, info.GetId())
//	defer sess.Close()
//	for ev, err := range sess.Send(ctx, "tidy up the repo") {
//		if err != nil { ... }
//		switch ev.Kind() {
//		case parkway.KindTextBlockDelta:
//			fmt.Print(ev.GetTextBlockDelta().GetDelta())
//		case parkway.KindRequireUserConfirm:
//			for _, call := range ev.ToolCalls() {
//				err = sess.Confirm(ctx, call, parkway.WithSuggestedRules())
//			}
//		}
//	}
//
// # Streams, inputs and acknowledgements
//
// A [Session] is one Chat stream attached to a session. Events arrive in seq order and are read with
// [Session.Next], [Session.Events], [Session.UntilSettled] or [Session.Send]; a reply's stretch of
// events ends with REPLY_END (finished) or REPLY_PARKED (waiting for a person or a client tool).
// Every input ([Session.Confirm], [Session.Deny], [Session.SubmitResult], [Session.Answer],
// [Session.Interrupt], [Session.SendEvent]) waits for the server's input_ack and returns nil when
// the input was applied, or the refusal as a gRPC status error: status.FromError works on it and
// its details carry *errdetails.BadRequest (read them with [FieldViolations]) or
// *errdetails.PreconditionFailure. Unary calls on [Client] return the gRPC status errors they get.
//
// # Contexts
//
// [NewClient] takes no ctx: it does not connect, the first call does. Every method that takes a ctx
// stops waiting when ctx ends and returns ctx's error (a gRPC status with code CANCELED or
// DEADLINE_EXCEEDED from a unary call); with a ctx that has already ended nothing is sent. A
// [Session] outlives the ctx given to [Client.Attach], which bounds only the attach; [Session.Close]
// ends it. An input whose ctx ended while it waited for its acknowledgement may still be applied.
//
// # Reconnecting
//
// When the stream breaks with UNAVAILABLE (a server restart, a dropped connection; also
// RESOURCE_EXHAUSTED with reason STREAM_BACKLOG), the session attaches again by itself with
// after_seq set to the last seq it received, retrying with a bounded backoff for up to
// [DefaultReconnectWindow] (see [WithReconnectWindow]). The server replays what was missed, so the
// consumer sees every logged event exactly once and in order. [WithAddressFunc] lets the client
// find a server that came back on another address.
//
// After a replay the server re-announces the REQUIRE_USER_CONFIRM and REQUIRE_EXTERNAL_EXECUTION
// events of a parked reply (seq 0, replayed=true). The session de-duplicates them: a re-announced
// call whose announcement (same kind, same tool call id) this Session already delivered is dropped,
// and a re-announcement is delivered with only the calls the consumer has not seen; so a fresh
// Session attached to a parked session does receive what is pending, while a reconnect never
// repeats a prompt. [WithReannouncements] delivers every re-announcement unfiltered instead.
//
// An input whose acknowledgement was lost with the broken stream is sent again on the new stream
// with the same request_id, which the server applies at most once (a duplicate is acknowledged as
// applied); an input sent while the session is reconnecting waits for the new stream. The caller
// sees one outcome either way. Only when the session gives up (the reconnect window passed, or an
// error other than the above) do waiting inputs fail with that error, their outcome unknown.
package parkway
