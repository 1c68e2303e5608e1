package parkway

import (
	"context"
	"iter"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// ListAuditRecords returns one page of the tenant's audit trail (every permission decision and
// answer: who, when, which call, which rule), oldest first; req may filter by session and tool call
// and carries the page token (nil lists the first page). See [Client.AuditRecords] to iterate.
func (c *Client) ListAuditRecords(ctx context.Context, req *pb.ListAuditRecordsRequest) (*pb.ListAuditRecordsResponse, error) {
	if req == nil {
		req = &pb.ListAuditRecordsRequest{}
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	return c.audit.ListAuditRecords(ctx, req)
}

// AuditRecords yields every audit record of the session sessionID (empty: of the whole tenant),
// oldest first, fetching page after page; it stops at the first error, which it yields.
func (c *Client) AuditRecords(ctx context.Context, sessionID string) iter.Seq2[*pb.AuditRecord, error] {
	return func(yield func(*pb.AuditRecord, error) bool) {
		req := &pb.ListAuditRecordsRequest{SessionId: sessionID}
		for {
			page, err := c.ListAuditRecords(ctx, req)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, r := range page.GetRecords() {
				if !yield(r, nil) {
					return
				}
			}
			if page.GetNextPageToken() == "" {
				return
			}
			req.PageToken = page.GetNextPageToken()
		}
	}
}

// ListDeadLetters returns one page of the tenant's dead letters, oldest first: park notifications
// given up after their last attempt, each with its receiver, body and last error (nil req lists
// the first page).
func (c *Client) ListDeadLetters(ctx context.Context, req *pb.ListDeadLettersRequest) (*pb.ListDeadLettersResponse, error) {
	if req == nil {
		req = &pb.ListDeadLettersRequest{}
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	return c.audit.ListDeadLetters(ctx, req)
}
