package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Objects is the media store (MinIO or any S3 API) for one bucket.
type Objects struct {
	client *minio.Client
	bucket string
}

// ObjectsConfig says where the store is.
type ObjectsConfig struct {
	Endpoint, AccessKey, SecretKey, Bucket string
	UseSSL                                 bool
}

// OpenObjects connects to the store and creates the bucket when missing.
func OpenObjects(ctx context.Context, cfg ObjectsConfig) (*Objects, error) {
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseSSL,
	})
	if err != nil {
		return nil, fmt.Errorf("object store client: %w", err)
	}
	o := &Objects{client: client, bucket: cfg.Bucket}
	exists, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("reach object store: %w", err)
	}
	if !exists {
		if err := client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{}); err != nil {
			// Another process may have created it meanwhile.
			if exists, _ := client.BucketExists(ctx, cfg.Bucket); !exists {
				return nil, fmt.Errorf("create bucket %s: %w", cfg.Bucket, err)
			}
		}
	}
	return o, nil
}

// A streaming upload of unknown length fills streamParts buffers of
// uploadPartSize in turn and sends them in parallel, so reading the client
// and writing the store overlap while memory stays bounded (16 MiB).
const (
	uploadPartSize = 8 << 20
	streamParts    = 4
)

// Put streams r to key. size may be -1 when unknown; then the upload goes in
// parts, so memory stays bounded whatever the length.
func (o *Objects) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (int64, error) {
	info, err := o.client.PutObject(ctx, o.bucket, key, r, size, minio.PutObjectOptions{
		ContentType:           contentType,
		PartSize:              uploadPartSize,
		NumThreads:            streamParts,
		ConcurrentStreamParts: true,
		DisableContentSha256:  true,
	})
	if err != nil {
		return 0, fmt.Errorf("put object %s: %w", key, err)
	}
	return info.Size, nil
}

// PutFile uploads a local file to key.
func (o *Objects) PutFile(ctx context.Context, key, path, contentType string) error {
	_, err := o.client.FPutObject(ctx, o.bucket, key, path, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	return nil
}

// GetFile downloads key to a local file.
func (o *Objects) GetFile(ctx context.Context, key, path string) error {
	if err := o.client.FGetObject(ctx, o.bucket, key, path, minio.GetObjectOptions{}); err != nil {
		return fmt.Errorf("download %s: %w", key, notFoundObject(err))
	}
	return nil
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Size        int64
	ContentType string
	ETag        string
}

// Stat describes key.
func (o *Objects) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	info, err := o.client.StatObject(ctx, o.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, notFoundObject(err)
	}
	return ObjectInfo{Size: info.Size, ContentType: info.ContentType, ETag: info.ETag}, nil
}

// Open reads key from offset; length < 0 reads to the end.
func (o *Objects) Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	opts := minio.GetObjectOptions{}
	if offset > 0 || length >= 0 {
		end := int64(0)
		if length >= 0 {
			end = offset + length - 1
		}
		if err := opts.SetRange(offset, end); err != nil {
			return nil, err
		}
	}
	// Core answers errors (a missing key) at once, before the first Read.
	obj, _, _, err := minio.Core{Client: o.client}.GetObject(ctx, o.bucket, key, opts)
	return obj, notFoundObject(err)
}

// PresignGet returns a URL that reads key without credentials until ttl
// passes (for tools such as ffprobe that read over HTTP).
func (o *Objects) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	u, err := o.client.PresignedGetObject(ctx, o.bucket, key, ttl, nil)
	if err != nil {
		return "", fmt.Errorf("presign %s: %w", key, err)
	}
	return u.String(), nil
}

// Remove deletes key; a missing key is not an error.
func (o *Objects) Remove(ctx context.Context, key string) error {
	return o.client.RemoveObject(ctx, o.bucket, key, minio.RemoveObjectOptions{})
}

// Health checks that the bucket answers.
func (o *Objects) Health(ctx context.Context) error {
	_, err := o.client.BucketExists(ctx, o.bucket)
	return err
}

func notFoundObject(err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.StatusCode == http.StatusNotFound || resp.Code == "NoSuchKey") {
		return ErrNotFound
	}
	return err
}

// List returns the keys under prefix (operators and tests).
func (o *Objects) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range o.client.ListObjects(ctx, o.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		keys = append(keys, obj.Key)
	}
	return keys, nil
}
