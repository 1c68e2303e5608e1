package parkway

import (
	"context"
	"errors"
	"io"
	"iter"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// Watch yields a session's events over the server-streaming Watch RPC, for programs that cannot
// keep a bidi stream open: the stored events after afterSeq, the re-announced pending calls of a
// parked reply (seq 0, replayed), then live events, exactly as [Client.Attach] would. Send inputs
// with [Client.Send]. It stops when ctx ends or the loop breaks (no error then), and yields the
// error that ends the stream otherwise (NOT_FOUND for an unknown session, UNAVAILABLE when the
// server shuts down: watch again after the last seq read). It does not reconnect by itself. A
// server-streaming call can only be cancelled: stopping before the server ends the stream (ctx, or
// breaking the loop) resets the stream, and each reset counts against the server's limit on streams
// reset by a client (see [Session.Close]), past which the server closes the connection.
func (c *Client) Watch(ctx context.Context, sessionID string, afterSeq uint64) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := c.agent.Watch(ctx, &pb.WatchRequest{SessionId: sessionID, AfterSeq: afterSeq})
		if err != nil {
			yield(nil, err)
			return
		}
		for {
			ev, err := stream.Recv()
			if errors.Is(err, io.EOF) || (err != nil && ctx.Err() != nil) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&Event{ServerEvent: ev}, nil) {
				return
			}
		}
	}
}

// Send applies one input over the unary Send RPC (the inputs of a Chat stream except attach) and
// returns its acknowledgement: the request id and the reply the input started or acted on. A
// refused input is the error, with the status and details a Chat acknowledgement would carry. An
// empty request_id is filled with a random one; a retry with the same id is applied once.
func (c *Client) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	if req == nil {
		return nil, errors.New("parkway: Send needs a request")
	}
	if req.GetRequestId() == "" {
		req = cloneSendRequest(req)
		req.RequestId = newRequestID()
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	return c.agent.Send(ctx, req)
}

// ListMessages returns one page of a session's messages, newest first: user messages, each
// finished reply's final message (also of replies whose events were compacted) and the active
// reply's message so far. req carries the page size and token (see [pb.ListMessagesRequest]).
func (c *Client) ListMessages(ctx context.Context, req *pb.ListMessagesRequest) (*pb.ListMessagesResponse, error) {
	if req == nil {
		return nil, errors.New("parkway: ListMessages needs a request")
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	return c.agent.ListMessages(ctx, req)
}
