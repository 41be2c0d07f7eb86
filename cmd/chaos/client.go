package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// api is one client of one API origin (an API process, or the front).
type api struct {
	name string // api1, api2, front
	base string // http://host:port
	key  string
	http *http.Client
}

// apiError is a non-2xx answer, with the envelope's code.
type apiError struct {
	Status int
	Code   string
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Body) }

func (a *api) do(ctx context.Context, method, path, contentType string, body io.Reader) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+"/api/v1"+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &env)
	if resp.StatusCode/100 != 2 {
		return nil, &apiError{Status: resp.StatusCode, Code: env.Error.Code, Body: strings.TrimSpace(string(raw))}
	}
	return env.Data, nil
}

func (a *api) getJSON(ctx context.Context, path string, v any) error {
	data, err := a.do(ctx, http.MethodGet, path, "", nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func (a *api) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	data, err := a.do(ctx, http.MethodPost, path, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// upload posts file (and fields) as multipart to path, streaming the file.
// rate, when above zero, caps the bytes per second sent, and progress (if
// not nil) is told the bytes sent so far.
func (a *api) upload(ctx context.Context, path, file string, fields map[string]string, rate int, progress func(int64)) (json.RawMessage, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			for k, v := range fields {
				if err := mw.WriteField(k, v); err != nil {
					return err
				}
			}
			part, err := mw.CreateFormFile("file", filepath.Base(file))
			if err != nil {
				return err
			}
			f, err := os.Open(file)
			if err != nil {
				return err
			}
			defer f.Close()
			var sent int64
			buf := make([]byte, 64<<10)
			for {
				n, rerr := f.Read(buf)
				if n > 0 {
					if _, err := part.Write(buf[:n]); err != nil {
						return err
					}
					sent += int64(n)
					if progress != nil {
						progress(sent)
					}
					if rate > 0 {
						time.Sleep(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
					}
				}
				if rerr == io.EOF {
					break
				}
				if rerr != nil {
					return rerr
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	return a.do(ctx, http.MethodPost, path, mw.FormDataContentType(), pr)
}

// jobView is what GET /transcribe/{id} and /subtitles/{id} answer, in part.
type jobView struct {
	ID        int64  `json:"id"`
	Status    string `json:"status"`
	ErrorCode string `json:"error_code"`
}

// batchView is GET /sms/jobs/{id}, in part.
type batchView struct {
	ID              int64  `json:"id"`
	Status          string `json:"status"`
	TotalRecipients int    `json:"totalRecipients"`
	SentCount       int    `json:"sentCount"`
	FailedCount     int    `json:"failedCount"`
	CompletedAt     string `json:"completedAt"`
}
