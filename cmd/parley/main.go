// Command parley runs the Parley platform: the API, the worker, both at once
// for development, migrations, and the operator commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"parley/platform/version"
)

const usage = `usage: parley <command>

  api                      serve the REST API
  worker                   run the Temporal worker (jobs)
  dev                      API and worker in one process
  migrate up|down|status   manage the database schema
  admin ...                operator commands (run 'parley admin' for the list)
  carrier [inbound ...]    local stand-in SMS carrier (Twilio protocol) for development
  voice-provider           local stand-in voice provider (ElevenLabs Agents) with demo calls, for development
  mailcatcher              local mail catcher: takes SMTP and shows the mail on a web page, for development
  vapid generate           print a new Web Push (VAPID) key pair as env lines
  version                  print the release and the commit this binary was built from
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "parley:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "api":
		return serve(ctx, true, false)
	case "worker":
		return serve(ctx, false, true)
	case "dev":
		return serve(ctx, true, true)
	case "migrate":
		return migrate(ctx, args[1:])
	case "admin":
		return admin(ctx, args[1:])
	case "carrier":
		return carrier(ctx, args[1:])
	case "voice-provider":
		if len(args) > 1 {
			return fmt.Errorf("voice-provider takes no arguments")
		}
		return voiceProvider(ctx)
	case "mailcatcher":
		if len(args) > 1 {
			return fmt.Errorf("mailcatcher takes no arguments")
		}
		return runMailcatcher(ctx)
	case "vapid":
		return vapid(os.Stdout, args[1:])
	case "version":
		if len(args) > 1 {
			return fmt.Errorf("version takes no arguments")
		}
		fmt.Printf("parley %s (%s)\n", version.String(), runtime.Version())
		return nil
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
