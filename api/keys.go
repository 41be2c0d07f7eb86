package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"parley/service/accounts"
)

func (s *Server) listKeys(c *gin.Context) {
	caller, _ := keyFrom(c)
	keys, err := s.accounts.Keys(c.Request.Context(), caller)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, keys)
}

type createKeyRequest struct {
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at"`
	OwnerType string     `json:"owner_type"`
	Tier      string     `json:"tier"`
	AccountID string     `json:"account_id"`
}

func (s *Server) createKey(c *gin.Context) {
	var req createKeyRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	caller, _ := keyFrom(c)
	issued, err := s.accounts.IssueKey(c.Request.Context(), caller, accounts.KeyRequest(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusCreated, issued)
}

func (s *Server) revokeKey(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	caller, _ := keyFrom(c)
	k, err := s.accounts.RevokeKey(c.Request.Context(), caller, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, k)
}

// AccountService is what authentication, rate limiting and the key and
// profile handlers ask of the accounts service.
type AccountService interface {
	Authenticate(ctx context.Context, secret string) (accounts.Caller, error)
	Allow(ctx context.Context, caller accounts.Caller) (time.Duration, error)
	PollFloor(ctx context.Context, caller accounts.Caller, route string, interval time.Duration) (bool, error)
	RecordRequest(accountID string, at time.Time, failed bool)
	Flush(ctx context.Context) error
	Prune(ctx context.Context) error
	Keys(ctx context.Context, caller accounts.Caller) ([]accounts.Key, error)
	IssueKey(ctx context.Context, caller accounts.Caller, req accounts.KeyRequest) (accounts.IssuedKey, error)
	RevokeKey(ctx context.Context, caller accounts.Caller, id int64) (accounts.Key, error)
	Profile(ctx context.Context, accountID string) (accounts.Profile, error)
}
