package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"parley/devstack/localcarrier"
	"parley/platform/config"
)

const carrierUsage = `usage: parley carrier [inbound --from E164 --to E164 --body TEXT]

  (no arguments)   serve the local stand-in carrier on PARLEY_CARRIER_ADDR (default 127.0.0.1:8089),
                   keeping its messages under PARLEY_CARRIER_STATE_DIR when set
  inbound          text one of the account's numbers through the running stand-in at
                   PARLEY_TWILIO_BASE_URL, which learns opt-out keywords as Twilio does and
                   posts the signed inbound SMS to the API at PARLEY_BASE_URL

Both read PARLEY_TWILIO_ACCOUNT_SID and PARLEY_TWILIO_AUTH_TOKEN.
`

func carrier(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		return carrierServe(ctx)
	case args[0] == "inbound":
		return carrierInbound(ctx, args[1:])
	}
	fmt.Fprint(os.Stderr, carrierUsage)
	return fmt.Errorf("unknown carrier command %q", args[0])
}

// carrierConfig reads the settings with the account the stand-in accepts
// and signs with.
func carrierConfig() (config.Config, error) {
	cfg, err := config.Load()
	if err != nil {
		return cfg, err
	}
	if cfg.TwilioAccountSID == "" || cfg.TwilioAuthToken == "" {
		return cfg, errors.New("PARLEY_TWILIO_ACCOUNT_SID and PARLEY_TWILIO_AUTH_TOKEN must be set")
	}
	return cfg, nil
}

func carrierServe(ctx context.Context) error {
	cfg, err := carrierConfig()
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.LogLevel)
	if err != nil {
		return err
	}
	lcfg := localcarrier.Config{AccountSID: cfg.TwilioAccountSID, AuthToken: cfg.TwilioAuthToken, InboundURL: cfg.BaseURL, Log: log}
	var standIn *localcarrier.Server
	if cfg.CarrierStateDir == "" {
		standIn = localcarrier.New(lcfg)
	} else if standIn, err = localcarrier.Open(lcfg, cfg.CarrierStateDir); err != nil {
		// Kept across restarts, as the real carrier keeps them: a crash
		// test then tests Parley's recovery, not a forgetful stand-in.
		return err
	}
	defer standIn.Close()
	return serveStandIn(ctx, log, "local carrier", "PARLEY_CARRIER_ADDR", cfg.CarrierAddr, standIn)
}

func carrierInbound(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("parley carrier inbound", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	body := fs.String("body", "", "")
	if err := parse(fs, args, "from", "to", "body"); err != nil {
		fmt.Fprint(os.Stderr, carrierUsage)
		return err
	}
	cfg, err := carrierConfig()
	if err != nil {
		return err
	}
	messageSID, err := localcarrier.TextThrough(ctx, cfg.TwilioBaseURL, cfg.TwilioAccountSID, cfg.TwilioAuthToken, *from, *to, *body, nil)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]string{"messageSid": messageSID})
}
