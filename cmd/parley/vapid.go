package main

import (
	"fmt"
	"io"

	"parley/provider/webpush"
)

// vapid generates a Web Push application server key pair and prints it as
// environment lines, ready to append to an env file.
func vapid(out io.Writer, args []string) error {
	if len(args) != 1 || args[0] != "generate" {
		return fmt.Errorf("usage: parley vapid generate")
	}
	public, private, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "PARLEY_VAPID_PUBLIC_KEY=%s\nPARLEY_VAPID_PRIVATE_KEY=%s\n", public, private)
	return err
}
