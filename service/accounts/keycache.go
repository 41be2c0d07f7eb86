package accounts

import (
	"context"
	"sync"
	"time"

	"parley/model"
)

// keyCache answers ByPrefix from memory for up to its TTL after each read,
// so that authenticating a request costs no query most of the time. Only
// keys that exist are kept: an unknown prefix is looked up every time, so a
// key issued through another replica works at once. Keys and accounts
// returned are shared between callers, who must not modify them.
type keyCache struct {
	keys KeyStore
	ttl  time.Duration
	now  func() time.Time

	mu      sync.Mutex
	entries map[string]cachedKey
	// forgets counts Forget calls: a read that saw one begin while it
	// queried does not store what it read, which may predate the change.
	forgets uint64
	sweepAt time.Time
}

type cachedKey struct {
	key     model.APIKey
	expires time.Time
}

// newKeyCache caches keys read from keys for ttl, timed by now.
func newKeyCache(keys KeyStore, ttl time.Duration, now func() time.Time) *keyCache {
	return &keyCache{keys: keys, ttl: ttl, now: now, entries: map[string]cachedKey{}}
}

// ByPrefix is KeyStore.ByPrefix, from memory when read less than the TTL ago.
func (c *keyCache) ByPrefix(ctx context.Context, prefix string) (model.APIKey, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[prefix]
	forgets := c.forgets
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.key, nil
	}
	k, err := c.keys.ByPrefix(ctx, prefix)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil:
		delete(c.entries, prefix)
	case c.forgets == forgets:
		c.sweep(now)
		c.entries[prefix] = cachedKey{key: k, expires: now.Add(c.ttl)}
	}
	return k, err
}

// Forget drops a key, so that the next request reads it again (after this
// replica revoked it).
func (c *keyCache) Forget(prefix string) {
	c.mu.Lock()
	delete(c.entries, prefix)
	c.forgets++
	c.mu.Unlock()
}

// sweep drops expired entries, at most once per TTL, so the map holds only
// the keys used in the last two TTLs.
func (c *keyCache) sweep(now time.Time) {
	if now.Before(c.sweepAt) {
		return
	}
	for prefix, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, prefix)
		}
	}
	c.sweepAt = now.Add(c.ttl)
}
