//go:build integration

package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"parley/devstack/testenv"
	"parley/model"
)

// A stream of unknown length is stored whole, whatever its size around the
// part size (8 MiB): empty, in one PUT, or in parts sent in parallel.
func TestPutStream(t *testing.T) {
	o := testenv.Objects(t)
	ctx := context.Background()
	const part = 8 << 20
	for _, size := range []int{0, 1, part - 1, part, part + 1, 3*part + 12345} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			data := make([]byte, size)
			rand.NewChaCha8([32]byte{byte(size)}).Read(data)
			key := fmt.Sprintf("test/stream-%d", size)
			// Only a Reader, as a request body is: no length, no seeking.
			n, err := o.Put(ctx, key, struct{ io.Reader }{bytes.NewReader(data)}, -1, "audio/wav")
			if err != nil || n != int64(size) {
				t.Fatalf("Put = %d, %v; want %d", n, err, size)
			}
			r, err := o.Open(ctx, key, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes (%v), not the %d stored", len(got), err, size)
			}
			if info, err := o.Stat(ctx, key); err != nil || info.ContentType != "audio/wav" {
				t.Fatalf("stat: %+v %v", info, err)
			}
		})
	}
}

// A stream that breaks after some parts were sent stores nothing and
// leaves no parts behind.
func TestPutStreamBroken(t *testing.T) {
	o := testenv.Objects(t)
	ctx := context.Background()
	gone := errors.New("the client went away")
	r := io.MultiReader(bytes.NewReader(make([]byte, 20<<20)), failingReader{gone})
	if _, err := o.Put(ctx, "test/broken", r, -1, "audio/wav"); !errors.Is(err, gone) {
		t.Fatalf("Put: %v, want the reader's error", err)
	}
	if _, err := o.Stat(ctx, "test/broken"); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("stat: %v, want ErrNotFound", err)
	}
	cfg := testenv.Config(t)
	mc, err := minio.New(cfg.MinioEndpoint, &minio.Options{Creds: credentials.NewStaticV4(cfg.MinioAccessKey, cfg.MinioSecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	for up := range mc.ListIncompleteUploads(ctx, cfg.MinioBucket, "test/broken", true) {
		t.Fatalf("an upload was left behind: %+v", up)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }
