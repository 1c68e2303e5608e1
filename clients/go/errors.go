package parkway

import (
	"crypto/rand"
	"encoding/hex"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// ErrSessionClosed is returned by a Session's methods after [Session.Close].
var ErrSessionClosed = errors.New("parkway: session closed")

// FieldViolations returns the BadRequest field violations carried by a gRPC status error (an
// INVALID_ARGUMENT refusal names the offending fields by their path from the request's root, e.g.
// "external_execution_result.execution_results[0].ask_user.answers[0].selected[0]"), or nil when
// err carries none.
func FieldViolations(err error) []*errdetails.BadRequest_FieldViolation {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return nil
	}
	var out []*errdetails.BadRequest_FieldViolation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			out = append(out, br.GetFieldViolations()...)
		}
	}
	return out
}

// PreconditionViolations returns the PreconditionFailure violations carried by a gRPC status error
// (a FAILED_PRECONDITION refusal names the state that did not allow the input), or nil.
func PreconditionViolations(err error) []*errdetails.PreconditionFailure_Violation {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return nil
	}
	var out []*errdetails.PreconditionFailure_Violation
	for _, d := range st.Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			out = append(out, pf.GetViolations()...)
		}
	}
	return out
}

// ackError turns an InputAck status into nil (applied) or a gRPC status error (refused).
func ackError(st *spb.Status) error {
	if st == nil || st.GetCode() == int32(codes.OK) {
		return nil
	}
	return status.ErrorProto(st)
}

// newRequestID returns a random idempotency key.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

func cloneReplyRequest(r *pb.ReplyRequest) *pb.ReplyRequest {
	return proto.Clone(r).(*pb.ReplyRequest)
}

func cloneSendRequest(r *pb.SendRequest) *pb.SendRequest {
	return proto.Clone(r).(*pb.SendRequest)
}
