// Package client is Parley's Go client, generated from the API document
// (api/openapi.json) by oapi-codegen at the pinned version below. Regenerate
// with `go generate ./client/`; TestGeneratedClientIsCurrent fails when the
// document and this package differ.
//
//	c, err := client.NewClientWithResponses("https://parley.example.com",
//		client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
//			r.Header.Set("Authorization", "Bearer "+key)
//			return nil
//		}))
//	job, err := c.GetTranscriptionWithResponse(ctx, id, nil)
//	if err == nil && job.JSON200 != nil {
//		fmt.Println(job.JSON200.Data.Status)
//	}
package client

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../api/openapi.json
