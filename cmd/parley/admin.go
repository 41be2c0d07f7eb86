package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"parley/api"
	"parley/platform/config"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/storage"
)

const adminUsage = `usage: parley admin <command> [flags]

  account create --email E --name N [--locale en] [--balance-usd 25] [--paid] [--phone +15551234567 [--phone-verified]]
  credit add --account ID --usd 10 [--note TEXT]
  key create --account ID --name N --scopes a,b,c [--admin] [--expires-in 720h] [--tier standard|pro|unlimited]
  key revoke --id N
  limits set [--account ID] --concurrent-jobs N
  account update --id ID [--phone E164] [--phone-verified] [--paid|--free]
  number add --account ID --phone E164
  sms countries --account ID --set US,IL,GB
  sms quota --account ID --country CC|*|free --per-day N
  price set --item transcription|voice_cleanup|subtitle_burn|voice_minute --usd X   (per minute)
  price set --item sms:CC --usd X --cost-usd Y                                      (per segment)
  voice agent add --account ID|EMAIL --agent-id AGENT [--name NAME]
  voice agent list [--account ID|EMAIL]
  voice agent remove --agent-id AGENT
  bootstrap-dev [--email dev@parley.local]
  console-link --email EMAIL                 (a one-time web console sign-in link, for servers without SMTP)
`

// adminCommand runs against the database with parsed flags and returns the
// value to print as JSON.
type adminCommand func(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error)

func admin(ctx context.Context, args []string) error {
	commands := map[string]adminCommand{
		"account create": accountCreate,
		"account update": accountUpdate,
		"number add":     numberAdd,
		"sms countries":  smsCountries,
		"sms quota":      smsQuota,
		"credit add":     creditAdd,
		"key create":     keyCreate,
		"key revoke":     keyRevoke,
		"limits set":     limitsSet,
		"price set":      priceSet,
		"bootstrap-dev":  bootstrapDev,
		"console-link":   consoleLink,

		"voice agent add":    voiceAgentAdd,
		"voice agent list":   voiceAgentList,
		"voice agent remove": voiceAgentRemove,
	}
	// A command is named by its first one, two or three words.
	var name string
	var rest []string
	for n := 1; n <= 3 && n <= len(args); n++ {
		if candidate := strings.Join(args[:n], " "); commands[candidate] != nil {
			name, rest = candidate, args[n:]
			break
		}
	}
	if name == "" {
		fmt.Fprint(os.Stderr, adminUsage)
		return fmt.Errorf("unknown admin command")
	}
	db, err := openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	fs := flag.NewFlagSet("parley admin "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out, err := commands[name](ctx, db, fs, rest)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func parse(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, r := range required {
		if !set[r] {
			return fmt.Errorf("--%s is required", r)
		}
	}
	return nil
}

func accountCreate(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	email := fs.String("email", "", "")
	name := fs.String("name", "", "")
	locale := fs.String("locale", "en", "")
	balance := fs.Float64("balance-usd", 0, "")
	paid := fs.Bool("paid", false, "")
	phone := fs.String("phone", "", "")
	verified := fs.Bool("phone-verified", false, "")
	if err := parse(fs, args, "email", "name"); err != nil {
		return nil, err
	}
	if !strings.Contains(*email, "@") {
		return nil, fmt.Errorf("--email %q is not an e-mail address", *email)
	}
	if *locale != "en" && *locale != "he" && *locale != "ar" {
		return nil, fmt.Errorf("--locale must be en, he or ar")
	}
	credit, err := billing.FromUSD(*balance)
	if err != nil || credit < 0 {
		return nil, fmt.Errorf("--balance-usd must be a non-negative amount")
	}
	acc := storage.Account{Email: *email, Name: *name, Locale: *locale, Role: "user", Paid: *paid, PhoneVerified: *verified}
	if *phone != "" {
		acc.Phone = phone
	}
	if *verified && *phone == "" {
		return nil, fmt.Errorf("--phone-verified needs --phone")
	}
	if err := (storage.Accounts{DB: db}).Create(ctx, &acc); err != nil {
		return nil, err
	}
	if credit > 0 {
		_, err := storage.Ledger{DB: db}.Post(ctx, storage.Movement{
			AccountID: acc.ID, Kind: storage.KindTopUp, Amount: credit, Key: "account-create:" + acc.ID, Note: "opening balance",
		})
		if err != nil {
			return nil, err
		}
	}
	acc, err = storage.Accounts{DB: db}.Get(ctx, acc.ID)
	return accountView(acc), err
}

func creditAdd(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	amount := fs.Float64("usd", 0, "")
	note := fs.String("note", "", "")
	key := fs.String("idempotency-key", "", "")
	if err := parse(fs, args, "account", "usd"); err != nil {
		return nil, err
	}
	micros, err := billing.FromUSD(*amount)
	if err != nil || micros <= 0 {
		return nil, fmt.Errorf("--usd must be a positive amount")
	}
	if *key == "" {
		*key = "topup:" + randomHex()
	}
	entry, err := storage.Ledger{DB: db}.Post(ctx, storage.Movement{
		AccountID: *account, Kind: storage.KindTopUp, Amount: micros, Key: *key, Note: *note,
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("no account %q", *account)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"entry": ledgerView(entry), "balance_usd": entry.BalanceAfter.USD()}, nil
}

func keyCreate(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	name := fs.String("name", "", "")
	scopes := fs.String("scopes", "", "")
	isAdmin := fs.Bool("admin", false, "")
	expiresIn := fs.Duration("expires-in", 0, "")
	tier := fs.String("tier", "standard", "")
	if err := parse(fs, args, "account", "name", "scopes"); err != nil {
		return nil, err
	}
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	if _, ok := cfg.RateTiers[*tier]; !ok {
		return nil, fmt.Errorf("--tier %q is not configured (PARLEY_RATE_TIERS)", *tier)
	}
	spec := storage.KeySpec{AccountID: *account, Name: *name, Scopes: splitList(*scopes), OwnerType: apikey.OwnerUser, Tier: *tier}
	if *isAdmin {
		spec.OwnerType = apikey.OwnerAdmin
	}
	if err := apikey.ValidateScopes(spec.Scopes, spec.OwnerType); err != nil {
		return nil, err
	}
	switch {
	case *expiresIn < 0:
		return nil, fmt.Errorf("--expires-in must be positive")
	case *expiresIn == 0 && !*isAdmin:
		*expiresIn = 365 * 24 * time.Hour
	case *expiresIn > 365*24*time.Hour && !*isAdmin:
		return nil, fmt.Errorf("user keys must expire within 365 days (8760h)")
	}
	if *expiresIn > 0 {
		at := time.Now().Add(*expiresIn).UTC()
		spec.ExpiresAt = &at
	}
	if _, err := (storage.Accounts{DB: db}).Get(ctx, *account); err != nil {
		return nil, fmt.Errorf("account %q: %w", *account, err)
	}
	issued, err := storage.Keys{DB: db}.Issue(ctx, spec)
	if err != nil {
		return nil, err
	}
	return api.IssuedKeyView(issued), nil
}

func keyRevoke(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("id", 0, "")
	if err := parse(fs, args, "id"); err != nil {
		return nil, err
	}
	k, err := storage.Keys{DB: db}.Revoke(ctx, *id, "", time.Now())
	if err != nil {
		return nil, err
	}
	return api.KeyView(k), nil
}

func limitsSet(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	n := fs.Int("concurrent-jobs", -1, "")
	if err := parse(fs, args, "concurrent-jobs"); err != nil {
		return nil, err
	}
	if *n < 0 {
		return nil, fmt.Errorf("--concurrent-jobs must be zero or more")
	}
	if *account == "" {
		if err := (storage.Settings{DB: db}).Set(ctx, storage.SettingPlatformConcurrentJobs, int64(*n)); err != nil {
			return nil, err
		}
		return map[string]any{"platform_concurrent_jobs": *n}, nil
	}
	if err := (storage.Accounts{DB: db}).SetConcurrencyLimit(ctx, *account, *n); err != nil {
		return nil, fmt.Errorf("account %q: %w", *account, err)
	}
	return map[string]any{"account": *account, "concurrent_jobs": *n}, nil
}

func priceSet(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	item := fs.String("item", "", "")
	amount := fs.Float64("usd", -1, "")
	costUSD := fs.Float64("cost-usd", -1, "")
	if err := parse(fs, args, "item", "usd"); err != nil {
		return nil, err
	}
	micros, err := billing.FromUSD(*amount)
	if err != nil || micros < 0 {
		return nil, fmt.Errorf("--usd must be zero or more")
	}
	if country, ok := strings.CutPrefix(*item, "sms:"); ok {
		cost, err := billing.FromUSD(*costUSD)
		if err != nil || cost < 0 {
			return nil, fmt.Errorf("--cost-usd (what a segment costs the platform) is required for sms items and must be zero or more")
		}
		if _, err := config.ParseQuotas(country + "=0"); err != nil || country == "free" || country == "*" {
			return nil, fmt.Errorf("--item sms:CC needs an ISO 3166 alpha-2 country code, such as sms:US")
		}
		p, err := storage.Prices{DB: db}.SetSMS(ctx, country, micros, cost)
		if err != nil {
			return nil, err
		}
		return priceView(p), nil
	}
	p, err := storage.Prices{DB: db}.Set(ctx, *item, micros)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("no price item %q (transcription, voice_cleanup, subtitle_burn, voice_minute)", *item)
	}
	if err != nil {
		return nil, err
	}
	return priceView(p), nil
}

// accountRef resolves --account: an account id, or the e-mail address of
// one (so scripts such as make dev need not know the generated id).
func accountRef(ctx context.Context, db *bun.DB, ref string) (storage.Account, error) {
	accounts := storage.Accounts{DB: db}
	var acc storage.Account
	var err error
	if strings.Contains(ref, "@") {
		acc, err = accounts.GetByEmail(ctx, ref)
	} else {
		acc, err = accounts.Get(ctx, ref)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return acc, fmt.Errorf("no account %q", ref)
	}
	return acc, err
}

// voiceAgentAdd maps a provider agent to an account (again: renames it);
// the next voice sync reads its conversations of the last
// PARLEY_VOICE_BACKFILL.
func voiceAgentAdd(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	agentID := fs.String("agent-id", "", "")
	name := fs.String("name", "", "")
	if err := parse(fs, args, "account", "agent-id"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(*agentID) == "" {
		return nil, fmt.Errorf("--agent-id must not be empty")
	}
	acc, err := accountRef(ctx, db, *account)
	if err != nil {
		return nil, err
	}
	a := storage.VoiceAgent{AgentID: strings.TrimSpace(*agentID), AccountID: acc.ID, Name: strings.TrimSpace(*name)}
	if err := (storage.VoiceAgents{DB: db}).Add(ctx, &a); err != nil {
		return nil, err
	}
	return voiceAgentView(a), nil
}

func voiceAgentList(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	accountID := ""
	if *account != "" {
		acc, err := accountRef(ctx, db, *account)
		if err != nil {
			return nil, err
		}
		accountID = acc.ID
	}
	agents, err := storage.VoiceAgents{DB: db}.List(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]voiceAgentJSON, len(agents))
	for i, a := range agents {
		out[i] = voiceAgentView(a)
	}
	return map[string]any{"agents": out}, nil
}

// voiceAgentRemove unmaps an agent: its new conversations are no longer
// read; those already stored stay with the account.
func voiceAgentRemove(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	agentID := fs.String("agent-id", "", "")
	if err := parse(fs, args, "agent-id"); err != nil {
		return nil, err
	}
	a, err := storage.VoiceAgents{DB: db}.Remove(ctx, *agentID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("no mapped agent %q", *agentID)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"removed": voiceAgentView(a)}, nil
}

// Development fixtures: the dev account's verified phone, the number it
// sends SMS from (Twilio's test "from" number, which the local carrier
// accepts like any other) and the stand-in voice provider's demo agent.
const (
	devPhone  = "+12025550100"
	devSender = "+15005550006"
)

// bootstrapDev creates the development account (paid, with a verified
// phone, an owned number and the demo voice agent) and an all-scopes key
// the first time; later runs report that it exists.
func bootstrapDev(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	email := fs.String("email", "dev@parley.local", "")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if _, err := (storage.Accounts{DB: db}).GetByEmail(ctx, *email); err == nil {
		return map[string]any{"alreadyBootstrapped": true, "email": *email}, nil
	}
	fs = flag.NewFlagSet("account", flag.ContinueOnError)
	created, err := accountCreate(ctx, db, fs, []string{"--email", *email, "--name", "Developer", "--balance-usd", "25", "--paid",
		"--phone", devPhone, "--phone-verified"})
	if err != nil {
		return nil, err
	}
	acc := created.(accountJSON)
	if _, err := (storage.SMS{DB: db}).AddNumber(ctx, acc.ID, devSender); err != nil {
		return nil, err
	}
	agent := storage.VoiceAgent{AgentID: demoAgentID, AccountID: acc.ID, Name: "Demo reception"}
	if err := (storage.VoiceAgents{DB: db}).Add(ctx, &agent); err != nil {
		return nil, err
	}
	spec := storage.KeySpec{
		AccountID: acc.ID, Name: "dev (all scopes)", OwnerType: apikey.OwnerAdmin, Tier: "standard",
		Scopes: append(append([]string{}, apikey.UserScopes...), apikey.AdminScopes...),
	}
	key, err := storage.Keys{DB: db}.Issue(ctx, spec)
	if err != nil {
		return nil, err
	}
	return map[string]any{"account": acc, "key": api.IssuedKeyView(key), "secret": key.Secret, "smsFrom": devSender, "voiceAgent": demoAgentID}, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func accountUpdate(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.String("id", "", "")
	phone := fs.String("phone", "", "")
	verified := fs.Bool("phone-verified", false, "")
	paid := fs.Bool("paid", false, "")
	free := fs.Bool("free", false, "")
	if err := parse(fs, args, "id"); err != nil {
		return nil, err
	}
	if *paid && *free {
		return nil, fmt.Errorf("--paid and --free exclude each other")
	}
	acc, err := storage.Accounts{DB: db}.Get(ctx, *id)
	if err != nil {
		return nil, fmt.Errorf("account %q: %w", *id, err)
	}
	var columns []string
	if *phone != "" {
		p, err := sms.ParsePhone(*phone)
		if err != nil {
			return nil, fmt.Errorf("--phone: %w", err)
		}
		acc.Phone, acc.PhoneVerified = &p.E164, false
		columns = append(columns, "phone", "phone_verified")
	}
	if *verified {
		if acc.Phone == nil {
			return nil, fmt.Errorf("--phone-verified needs a phone (--phone)")
		}
		acc.PhoneVerified = true
		columns = append(columns, "phone_verified")
	}
	if *paid || *free {
		acc.Paid = *paid
		columns = append(columns, "paid")
	}
	if len(columns) == 0 {
		return nil, fmt.Errorf("nothing to update: give --phone, --phone-verified, --paid or --free")
	}
	slices.Sort(columns)
	columns = slices.Compact(columns)
	if err := (storage.Accounts{DB: db}).Update(ctx, &acc, columns...); err != nil {
		return nil, err
	}
	return accountView(acc), nil
}

func numberAdd(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	phone := fs.String("phone", "", "")
	if err := parse(fs, args, "account", "phone"); err != nil {
		return nil, err
	}
	p, err := sms.ParsePhone(*phone)
	if err != nil {
		return nil, fmt.Errorf("--phone: %w", err)
	}
	if _, err := (storage.Accounts{DB: db}).Get(ctx, *account); err != nil {
		return nil, fmt.Errorf("account %q: %w", *account, err)
	}
	n, err := storage.SMS{DB: db}.AddNumber(ctx, *account, p.E164)
	if errors.Is(err, storage.ErrConflict) {
		return nil, fmt.Errorf("%s is already an owned number", p.E164)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": n.ID, "phone": n.Phone, "account_id": n.AccountID}, nil
}

func smsCountries(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	set := fs.String("set", "", "")
	if err := parse(fs, args, "account", "set"); err != nil {
		return nil, err
	}
	countries := splitList(*set)
	for _, c := range countries {
		if _, err := config.ParseQuotas(c + "=0"); err != nil || c == "free" || c == "*" {
			return nil, fmt.Errorf("--set: %q is not an ISO 3166 alpha-2 code such as US", c)
		}
	}
	acc, err := storage.Accounts{DB: db}.Get(ctx, *account)
	if err != nil {
		return nil, fmt.Errorf("account %q: %w", *account, err)
	}
	acc.SMSCountries = append([]string{}, countries...)
	if err := (storage.Accounts{DB: db}).Update(ctx, &acc, "sms_countries"); err != nil {
		return nil, err
	}
	return map[string]any{"account": acc.ID, "sms_countries": acc.SMSCountries}, nil
}

func smsQuota(ctx context.Context, db *bun.DB, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	country := fs.String("country", "", "")
	perDay := fs.Int("per-day", -1, "")
	if err := parse(fs, args, "account", "country", "per-day"); err != nil {
		return nil, err
	}
	if _, err := config.ParseQuotas(fmt.Sprintf("%s=%d", *country, *perDay)); err != nil {
		return nil, fmt.Errorf("want --country CC, * or free and --per-day zero or more")
	}
	if _, err := (storage.Accounts{DB: db}).Get(ctx, *account); err != nil {
		return nil, fmt.Errorf("account %q: %w", *account, err)
	}
	if err := (storage.SMS{DB: db}).SetQuota(ctx, *account, *country, *perDay); err != nil {
		return nil, err
	}
	return map[string]any{"account": *account, "country": *country, "per_day": *perDay}, nil
}
