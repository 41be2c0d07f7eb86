package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"parley/model"
	"sort"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Objects is the media store (MinIO or any S3 API) for one bucket.
type Objects struct {
	client *minio.Client
	bucket string
	// parts are idle upload buffers, kept for the next streaming upload.
	parts partBuffers
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
	o := &Objects{client: client, bucket: cfg.Bucket, parts: make(partBuffers, streamParts)}
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

// A stream of unknown length (a client's upload) goes to the store in parts
// of uploadPartSize, at most streamParts of them filling or in flight at a
// time, so reading the client and writing the store overlap while one
// upload holds at most streamParts*uploadPartSize (32 MiB). The buffers are
// kept for the next upload (Objects.parts), so back-to-back uploads reuse the
// same memory instead of leaving 32 MiB of garbage each for the collector.
const (
	uploadPartSize = 8 << 20
	streamParts    = 4
)

// maxParts is the most parts an S3 multipart upload may have.
const maxParts = 10000

// partBuffers keeps idle part buffers between uploads.
type partBuffers chan []byte

func (p partBuffers) get() []byte {
	select {
	case b := <-p:
		return b
	default:
		return make([]byte, uploadPartSize)
	}
}

func (p partBuffers) put(b []byte) {
	select {
	case p <- b:
	default:
	}
}

// Put streams r to key. size may be -1 when unknown; then the upload goes in
// parts, so memory stays bounded whatever the length.
func (o *Objects) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (int64, error) {
	if size < 0 {
		n, err := o.putStream(ctx, key, r, contentType)
		if err != nil {
			return 0, fmt.Errorf("put object %s: %w", key, err)
		}
		return n, nil
	}
	info, err := o.client.PutObject(ctx, o.bucket, key, r, size, minio.PutObjectOptions{
		ContentType: contentType, PartSize: uploadPartSize, NumThreads: streamParts, DisableContentSha256: true,
	})
	if err != nil {
		return 0, fmt.Errorf("put object %s: %w", key, err)
	}
	return info.Size, nil
}

// putStream stores a stream of unknown length: in one PUT when it fits one
// part, else as a multipart upload of parts sent in parallel.
func (o *Objects) putStream(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	first := o.parts.get()
	n, err := io.ReadFull(r, first)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		defer o.parts.put(first)
		info, err := o.client.PutObject(ctx, o.bucket, key, bytes.NewReader(first[:n]), int64(n), minio.PutObjectOptions{
			ContentType: contentType, DisableContentSha256: true,
		})
		return info.Size, err
	}
	if err != nil {
		o.parts.put(first)
		return 0, err
	}
	return o.putParts(ctx, key, r, first, contentType)
}

// putParts uploads first, then the rest of r, as the parts of one multipart
// upload; on any error the upload is aborted so no parts are left behind.
func (o *Objects) putParts(ctx context.Context, key string, r io.Reader, first []byte, contentType string) (size int64, err error) {
	core := minio.Core{Client: o.client}
	uploadID, err := core.NewMultipartUpload(ctx, o.bucket, key, minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		o.parts.put(first)
		return 0, err
	}
	defer func() {
		if err != nil {
			_ = core.AbortMultipartUpload(context.WithoutCancel(ctx), o.bucket, key, uploadID)
		}
	}()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		parts []minio.CompletePart
	)
	// slots holds a token for every buffer this upload has filling or in
	// flight; the first one is taken already.
	slots := make(chan struct{}, streamParts)
	slots <- struct{}{}
	send := func(number int, buf []byte, n int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { o.parts.put(buf); <-slots }()
			part, err := core.PutObjectPart(ctx, o.bucket, key, uploadID, number, bytes.NewReader(buf[:n]), int64(n),
				minio.PutObjectPartOptions{DisableContentSha256: true})
			if err != nil {
				cancel(err)
				return
			}
			mu.Lock()
			parts = append(parts, minio.CompletePart{PartNumber: number, ETag: part.ETag})
			mu.Unlock()
		}()
	}
	send(1, first, len(first))
	size = int64(len(first))
	for number := 2; ; number++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		buf := o.parts.get()
		n, rerr := io.ReadFull(r, buf)
		if n > 0 && number > maxParts {
			rerr = fmt.Errorf("more than %d parts of %d bytes", maxParts, uploadPartSize)
		}
		if n == 0 || (rerr != nil && rerr != io.ErrUnexpectedEOF) {
			o.parts.put(buf)
			<-slots
			if rerr != io.EOF {
				cancel(rerr)
			}
			break
		}
		send(number, buf, n)
		size += int64(n)
		if rerr != nil { // io.ErrUnexpectedEOF: that was the last part
			break
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].PartNumber < parts[j].PartNumber })
	if _, err := core.CompleteMultipartUpload(ctx, o.bucket, key, uploadID, parts, minio.PutObjectOptions{ContentType: contentType}); err != nil {
		return 0, err
	}
	return size, nil
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

// Stat describes key.
func (o *Objects) Stat(ctx context.Context, key string) (model.ObjectInfo, error) {
	info, err := o.client.StatObject(ctx, o.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return model.ObjectInfo{}, notFoundObject(err)
	}
	return model.ObjectInfo{Size: info.Size, ContentType: info.ContentType, ETag: info.ETag}, nil
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
		return model.ErrNotFound
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

// ListPage returns up to limit keys under prefix that sort after
// startAfter, in key order: a walk resumes where its last page ended.
func (o *Objects) ListPage(ctx context.Context, prefix, startAfter string, limit int) ([]model.StoredObject, error) {
	ctx, cancel := context.WithCancel(ctx) // stops the listing goroutine at the limit
	defer cancel()
	var out []model.StoredObject
	for obj := range o.client.ListObjects(ctx, o.bucket, minio.ListObjectsOptions{
		Prefix: prefix, StartAfter: startAfter, Recursive: true, MaxKeys: limit,
	}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("list objects under %s: %w", prefix, obj.Err)
		}
		out = append(out, model.StoredObject{Key: obj.Key, LastModified: obj.LastModified})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// RemoveAll deletes keys in one request per thousand; missing keys are not
// an error.
func (o *Objects) RemoveAll(ctx context.Context, keys []string) error {
	objects := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		objects <- minio.ObjectInfo{Key: k}
	}
	close(objects)
	for e := range o.client.RemoveObjects(ctx, o.bucket, objects, minio.RemoveObjectsOptions{}) {
		if e.Err != nil {
			return fmt.Errorf("remove object %s: %w", e.ObjectName, e.Err)
		}
	}
	return nil
}
