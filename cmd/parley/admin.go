package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/config"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/service/accounts"
	"parley/service/messaging"
	"parley/service/wiring"
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
  number update --id N --mps N|none          (the most messages a second it sends; none: no limit)
  sms countries --account ID --set US,IL,GB
  sms quota --account ID --country CC|*|free --per-day N
  sms quiet-hours --account ID --start HH:MM --end HH:MM | --off    (the account's default, in each recipient's local time)
  sms keywords --account ID [--add WORD --kind opt_out|opt_in|help] [--remove WORD]
  sms replies --account ID [--opt-out-text T] [--opt-in-text T] [--help-text T]   ("" restores the default)
  price set --item transcription|voice_cleanup|subtitle_burn|voice_minute --usd X   (per minute)
  price set --item sms:CC --usd X --cost-usd Y                                      (per segment)
  voice agent add --account ID|EMAIL --agent-id AGENT [--name NAME]
  voice agent list [--account ID|EMAIL]
  voice agent remove --agent-id AGENT
  bootstrap-dev [--email dev@parley.local]
  console-link --email EMAIL                 (a one-time web console sign-in link, for servers without SMTP)
`

// adminCommand runs one operation through the services with parsed flags
// and returns the value to print as JSON.
type adminCommand func(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error)

// adminCommands are the admin commands by name (one, two or three words).
func adminCommands() map[string]adminCommand {
	return map[string]adminCommand{
		"account create":  accountCreate,
		"account update":  accountUpdate,
		"number add":      numberAdd,
		"number update":   numberUpdate,
		"sms countries":   smsCountries,
		"sms quota":       smsQuota,
		"sms quiet-hours": smsQuietHours,
		"sms keywords":    smsKeywords,
		"sms replies":     smsReplies,
		"credit add":      creditAdd,
		"key create":      keyCreate,
		"key revoke":      keyRevoke,
		"limits set":      limitsSet,
		"price set":       priceSet,
		"bootstrap-dev":   bootstrapDev,
		"console-link":    consoleLink,

		"voice agent add":    voiceAgentAdd,
		"voice agent list":   voiceAgentList,
		"voice agent remove": voiceAgentRemove,
	}
}

func admin(ctx context.Context, args []string) error {
	commands := adminCommands()
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
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	db, err := storage.OpenDB(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	catalog, err := i18n.Load()
	if err != nil {
		return err
	}
	svc := wiring.New(wiring.Deps{Config: cfg, Store: storage.NewStore(db), Catalog: catalog, Log: logrus.StandardLogger()})
	fs := flag.NewFlagSet("parley admin "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out, err := commands[name](ctx, svc, fs, rest)
	if err != nil {
		return operatorError(catalog, err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// operatorError words a service's refusal for the operator, in English.
func operatorError(catalog *i18n.Catalog, err error) error {
	if p, ok := problem.As(err); ok && p.Cause == nil {
		return errors.New(catalog.English(p.Code, p.Params))
	}
	return err
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

// usd reads a dollar amount of a flag.
func usd(flagName string, amount float64) (billing.Micros, error) {
	m, err := billing.FromUSD(amount)
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", flagName, err)
	}
	return m, nil
}

// accountErr names the account an operation could not find.
func accountErr(ref string, err error) error {
	if errors.Is(err, model.ErrNotFound) {
		return fmt.Errorf("no account %q", ref)
	}
	return err
}

func accountCreate(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
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
	credit, err := usd("balance-usd", *balance)
	if err != nil {
		return nil, err
	}
	return svc.Accounts.CreateAccount(ctx, accounts.NewAccount{Email: *email, Name: *name, Locale: *locale, Balance: credit,
		Paid: *paid, Phone: *phone, PhoneVerified: *verified})
}

func creditAdd(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	amount := fs.Float64("usd", 0, "")
	note := fs.String("note", "", "")
	key := fs.String("idempotency-key", "", "")
	if err := parse(fs, args, "account", "usd"); err != nil {
		return nil, err
	}
	micros, err := usd("usd", *amount)
	if err != nil {
		return nil, err
	}
	credited, err := svc.Accounts.Credit(ctx, *account, micros, *key, *note)
	return credited, accountErr(*account, err)
}

func keyCreate(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	name := fs.String("name", "", "")
	scopes := fs.String("scopes", "", "")
	isAdmin := fs.Bool("admin", false, "")
	expiresIn := fs.Duration("expires-in", 0, "")
	tier := fs.String("tier", apikey.StandardTier, "")
	if err := parse(fs, args, "account", "name", "scopes"); err != nil {
		return nil, err
	}
	issued, err := svc.Accounts.IssueOperatorKey(ctx, accounts.OperatorKey{AccountID: *account, Name: *name,
		Scopes: splitList(*scopes), Admin: *isAdmin, ExpiresIn: *expiresIn, Tier: *tier})
	return issued, accountErr(*account, err)
}

func keyRevoke(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("id", 0, "")
	if err := parse(fs, args, "id"); err != nil {
		return nil, err
	}
	return svc.Accounts.RevokeKey(ctx, accounts.Operator, *id)
}

func limitsSet(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	n := fs.Int("concurrent-jobs", -1, "")
	if err := parse(fs, args, "concurrent-jobs"); err != nil {
		return nil, err
	}
	limit, err := svc.Accounts.SetConcurrencyLimit(ctx, *account, *n)
	return limit, accountErr(*account, err)
}

func priceSet(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	item := fs.String("item", "", "")
	amount := fs.Float64("usd", -1, "")
	costUSD := fs.Float64("cost-usd", -1, "")
	if err := parse(fs, args, "item", "usd"); err != nil {
		return nil, err
	}
	micros, err := usd("usd", *amount)
	if err != nil {
		return nil, err
	}
	if country, ok := billing.SMSItemCountry(*item); ok {
		if *costUSD < 0 {
			return nil, fmt.Errorf("--cost-usd (what a segment costs the platform) is required for sms items and must be zero or more")
		}
		cost, err := usd("cost-usd", *costUSD)
		if err != nil {
			return nil, err
		}
		return svc.Accounts.SetSMSPrice(ctx, country, micros, cost)
	}
	p, err := svc.Accounts.SetPrice(ctx, *item, micros)
	if errors.Is(err, model.ErrNotFound) {
		return nil, fmt.Errorf("no price item %q (%s)", *item, strings.Join(billing.PerMinuteItems(), ", "))
	}
	return p, err
}

// voiceAgentAdd maps a provider agent to an account (again: renames it);
// the next voice sync reads its conversations of the last
// PARLEY_VOICE_BACKFILL.
func voiceAgentAdd(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	agentID := fs.String("agent-id", "", "")
	name := fs.String("name", "", "")
	if err := parse(fs, args, "account", "agent-id"); err != nil {
		return nil, err
	}
	acc, err := svc.Accounts.FindAccount(ctx, *account)
	if err != nil {
		return nil, accountErr(*account, err)
	}
	return svc.Voice.AddAgent(ctx, acc.ID, *agentID, *name)
}

func voiceAgentList(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	accountID := ""
	if *account != "" {
		acc, err := svc.Accounts.FindAccount(ctx, *account)
		if err != nil {
			return nil, accountErr(*account, err)
		}
		accountID = acc.ID
	}
	agents, err := svc.Voice.Agents(ctx, accountID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"agents": agents}, nil
}

// voiceAgentRemove unmaps an agent: its new conversations are no longer
// read; those already stored stay with the account.
func voiceAgentRemove(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	agentID := fs.String("agent-id", "", "")
	if err := parse(fs, args, "agent-id"); err != nil {
		return nil, err
	}
	a, err := svc.Voice.RemoveAgent(ctx, *agentID)
	if errors.Is(err, model.ErrNotFound) {
		return nil, fmt.Errorf("no mapped agent %q", *agentID)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"removed": a}, nil
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
func bootstrapDev(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	email := fs.String("email", "dev@parley.local", "")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if _, err := svc.Accounts.FindAccount(ctx, *email); err == nil {
		return map[string]any{"alreadyBootstrapped": true, "email": *email}, nil
	}
	acc, err := svc.Accounts.CreateAccount(ctx, accounts.NewAccount{Email: *email, Name: "Developer", Locale: "en",
		Balance: 25 * billing.MicrosPerUSD, Paid: true, Phone: devPhone, PhoneVerified: true})
	if err != nil {
		return nil, err
	}
	if _, err := svc.Accounts.AddNumber(ctx, acc.ID, devSender); err != nil {
		return nil, err
	}
	if _, err := svc.Voice.AddAgent(ctx, acc.ID, demoAgentID, "Demo reception"); err != nil {
		return nil, err
	}
	key, err := svc.Accounts.IssueOperatorKey(ctx, accounts.OperatorKey{
		AccountID: acc.ID, Name: "dev (all scopes)", Admin: true, Tier: apikey.StandardTier,
		Scopes: append(append([]string{}, apikey.UserScopes...), apikey.AdminScopes...),
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"account": acc, "key": key, "secret": key.Secret, "smsFrom": devSender, "voiceAgent": demoAgentID}, nil
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

func accountUpdate(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.String("id", "", "")
	phone := fs.String("phone", "", "")
	verified := fs.Bool("phone-verified", false, "")
	paid := fs.Bool("paid", false, "")
	free := fs.Bool("free", false, "")
	if err := parse(fs, args, "id"); err != nil {
		return nil, err
	}
	ch := accounts.AccountChange{Phone: *phone, PhoneVerified: *verified}
	switch {
	case *paid && *free:
		return nil, fmt.Errorf("--paid and --free exclude each other")
	case *paid || *free:
		ch.Paid = paid
	}
	acc, err := svc.Accounts.UpdateAccount(ctx, *id, ch)
	return acc, accountErr(*id, err)
}

func numberAdd(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	phone := fs.String("phone", "", "")
	if err := parse(fs, args, "account", "phone"); err != nil {
		return nil, err
	}
	n, err := svc.Accounts.AddNumber(ctx, *account, *phone)
	return n, accountErr(*account, err)
}

func numberUpdate(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	id := fs.Int64("id", 0, "")
	mps := fs.String("mps", "", "")
	if err := parse(fs, args, "id", "mps"); err != nil {
		return nil, err
	}
	var perSecond *int
	if *mps != "none" {
		n, err := strconv.Atoi(*mps)
		if err != nil {
			return nil, fmt.Errorf("--mps: want a whole number of messages a second, or none")
		}
		perSecond = &n
	}
	n, err := svc.Accounts.SetNumberPace(ctx, *id, perSecond)
	if errors.Is(err, model.ErrNotFound) {
		return nil, fmt.Errorf("no number %d", *id)
	}
	return n, err
}

func smsCountries(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	set := fs.String("set", "", "")
	if err := parse(fs, args, "account", "set"); err != nil {
		return nil, err
	}
	c, err := svc.Accounts.SetSMSCountries(ctx, *account, splitList(*set))
	return c, accountErr(*account, err)
}

// quietHoursSetting is an account's default quiet hours as the CLI prints
// them; QuietHours is null when they are off.
type quietHoursSetting struct {
	Account    string                    `json:"account"`
	QuietHours *messaging.QuietHoursView `json:"quiet_hours"`
}

func smsQuietHours(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	start := fs.String("start", "", "")
	end := fs.String("end", "", "")
	off := fs.Bool("off", false, "")
	if err := parse(fs, args, "account"); err != nil {
		return nil, err
	}
	out := quietHoursSetting{Account: *account}
	var q *sms.QuietHours
	switch {
	case *off && (*start != "" || *end != ""):
		return nil, errors.New("--off takes no --start or --end")
	case !*off:
		w, err := sms.ParseQuietHours(*start, *end)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		q, out.QuietHours = &w, &messaging.QuietHoursView{Start: w.StartClock(), End: w.EndClock()}
	}
	return out, accountErr(*account, svc.SMS.SetQuietHours(ctx, *account, q))
}

func smsQuota(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	country := fs.String("country", "", "")
	perDay := fs.Int("per-day", -1, "")
	if err := parse(fs, args, "account", "country", "per-day"); err != nil {
		return nil, err
	}
	q, err := svc.Accounts.SetSMSQuota(ctx, *account, *country, *perDay)
	return q, accountErr(*account, err)
}

// smsKeywords adds or removes one of an account's own keywords and prints
// the account's keyword settings (the defaults cannot be removed).
func smsKeywords(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	add := fs.String("add", "", "")
	kind := fs.String("kind", "", "")
	remove := fs.String("remove", "", "")
	if err := parse(fs, args, "account"); err != nil {
		return nil, err
	}
	if _, err := svc.SMS.Keywords(ctx, *account); err != nil {
		return nil, accountErr(*account, err)
	}
	if *add != "" {
		if _, err := svc.SMS.AddKeyword(ctx, *account, *add, *kind); err != nil {
			return nil, err
		}
	}
	if *remove != "" {
		if err := svc.SMS.RemoveKeyword(ctx, *account, *remove); errors.Is(err, model.ErrNotFound) {
			return nil, fmt.Errorf("the account has no keyword %q of its own", *remove)
		} else if err != nil {
			return nil, err
		}
	}
	return svc.SMS.Keywords(ctx, *account)
}

// smsReplies sets an account's answers to the keywords; a flag left out
// keeps its text, an empty one restores the default.
func smsReplies(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	account := fs.String("account", "", "")
	texts := map[string]*string{"opt-out-text": fs.String("opt-out-text", "", ""), "opt-in-text": fs.String("opt-in-text", "", ""),
		"help-text": fs.String("help-text", "", "")}
	if err := parse(fs, args, "account"); err != nil {
		return nil, err
	}
	now, err := svc.SMS.Keywords(ctx, *account)
	if err != nil {
		return nil, accountErr(*account, err)
	}
	current := func(kind string, text string) *string {
		if !now.Custom[kind] {
			return nil
		}
		return &text
	}
	set := model.SMSReplyTexts{OptOut: current("opt_out", now.Texts.OptOut), OptIn: current("opt_in", now.Texts.OptIn),
		Help: current("help", now.Texts.Help)}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "opt-out-text":
			set.OptOut = texts[f.Name]
		case "opt-in-text":
			set.OptIn = texts[f.Name]
		case "help-text":
			set.Help = texts[f.Name]
		}
	})
	if err := svc.SMS.SetReplyTexts(ctx, *account, set); err != nil {
		return nil, err
	}
	return svc.SMS.Keywords(ctx, *account)
}
