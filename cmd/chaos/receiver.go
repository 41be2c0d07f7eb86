package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
)

// delivery is one webhook request the receiver took.
type delivery struct {
	HeaderID string // webhook-id
	EventID  string // the body's id
	Type     string
	Subject  string // the body's data.id (job, batch or message id)
	Raw      string
}

// receiver is the account's webhook endpoint: a loopback HTTP server that
// answers 204 to everything and remembers what came.
type receiver struct {
	mu   sync.Mutex
	got  []delivery
	srv  *http.Server
	addr string
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{addr: ln.Addr().String()}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	var body struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(raw, &body)
	var data struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(body.Data, &data)
	subject := ""
	if data.ID != nil {
		b, _ := json.Marshal(data.ID)
		subject = string(b)
	}
	r.mu.Lock()
	r.got = append(r.got, delivery{HeaderID: req.Header.Get("webhook-id"), EventID: body.ID, Type: body.Type, Subject: subject, Raw: string(raw)})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) close() { _ = r.srv.Close() }
