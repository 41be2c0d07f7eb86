package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	"parley/client"
)

// A URL transcription and its result: the README's example.
func Example() {
	ctx := context.Background()
	bearer := client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+os.Getenv("PARLEY_KEY"))
		return nil
	})
	c, err := client.NewClientWithResponses("http://127.0.0.1:8080", bearer)
	if err != nil {
		log.Fatal(err)
	}
	job, err := c.CreateTranscriptionWithResponse(ctx, nil, client.TranscribeURLRequest{Url: "https://example.com/talk.mp3"})
	if err != nil || job.JSON202 == nil {
		log.Fatal(err)
	}
	got, err := c.GetTranscriptionWithResponse(ctx, job.JSON202.Data.Id, nil)
	if err == nil && got.JSON200 != nil {
		fmt.Println(got.JSON200.Data.Status, got.JSON200.Data.TranscriptText)
	}
}
