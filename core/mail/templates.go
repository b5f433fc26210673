package mail

import (
	"bytes"
	htmltemplate "html/template"
	"strconv"
	"strings"
	texttemplate "text/template"
)

// Lang is a language the templates are written in.
type Lang string

const (
	English Lang = "en"
	Italian Lang = "it"
)

// PickLanguage chooses the email language from an Accept-Language header
// (SPEC §6: the request's header, not app or user settings). Entries are
// weighed by their q-values; the first entry of the highest weight whose
// primary tag is one we write in wins, `*` standing for English. Italian is
// chosen for `it` (and `it-IT`, `it-CH`, ...); everything else, a missing
// or malformed header included, gets English.
func PickLanguage(acceptLanguage string) Lang {
	best, bestQ := English, 0.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(part, ";")
		tag = strings.ToLower(strings.TrimSpace(tag))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.TrimSpace(k) == "q" {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // a malformed weight makes the entry unusable
				}
				q = f
			}
		}
		primary, _, _ := strings.Cut(tag, "-")
		var lang Lang
		switch primary {
		case "it":
			lang = Italian
		case "en", "*":
			lang = English
		default:
			continue
		}
		if q > bestQ { // strictly greater: earlier entries win ties
			best, bestQ = lang, q
		}
	}
	return best
}

// Content is a rendered email without its recipients.
type Content struct {
	Subject string
	HTML    string
	Text    string
}

// To addresses c.
func (c Content) To(addrs ...string) Message {
	return Message{To: addrs, Subject: c.Subject, HTML: c.HTML, Text: c.Text}
}

// RegistrationData fills the self-registration emails. Every field may come
// from the person registering (or, for App, from a super_admin): the HTML
// part escapes them all.
type RegistrationData struct {
	App   string // the application's label
	Name  string
	Email string
}

// ResetData fills the password reset email.
type ResetData struct {
	App  string
	Name string
	Link string // valid for one hour (SPEC §3.4), as the text says
}

// The templates. Each kind has, per language, a subject (a Go format with
// the app label), an HTML body and a text body. The HTML bodies are
// html/template, so every value is escaped for its context (text, or
// attribute URL for the link); the text bodies are text/template, since
// plain text has nothing to escape.
type kind struct {
	subject map[Lang]string
	html    map[Lang]*htmltemplate.Template
	text    map[Lang]*texttemplate.Template
}

const layoutHTML = `<!DOCTYPE html><html lang="{{.Lang}}"><head><meta charset="utf-8"></head>` +
	`<body style="font-family:sans-serif;line-height:1.5;color:#222">{{template "body" .}}</body></html>`

func newKind(subject map[Lang]string, html, text map[Lang]string) kind {
	k := kind{subject: subject, html: map[Lang]*htmltemplate.Template{}, text: map[Lang]*texttemplate.Template{}}
	for lang, src := range html {
		t := htmltemplate.Must(htmltemplate.New("layout").Parse(layoutHTML))
		k.html[lang] = htmltemplate.Must(t.New("body").Parse(src))
	}
	for lang, src := range text {
		k.text[lang] = texttemplate.Must(texttemplate.New("body").Parse(src))
	}
	return k
}

var registrationConfirmation = newKind(
	map[Lang]string{
		English: "Your registration at %s",
		Italian: "La tua registrazione a %s",
	},
	map[Lang]string{
		English: `<p>Hello {{.Name}},</p>
<p>we have received your request to join <strong>{{.App}}</strong> with the address {{.Email}}.</p>
<p>An administrator will review it. You will be able to sign in once your account has been approved.</p>
<p>If you did not ask for this, you can ignore this email.</p>`,
		Italian: `<p>Gentile {{.Name}},</p>
<p>abbiamo ricevuto la tua richiesta di accesso a <strong>{{.App}}</strong> con l'indirizzo {{.Email}}.</p>
<p>Un amministratore la esaminerà. Potrai accedere quando il tuo account sarà stato approvato.</p>
<p>Se non hai fatto tu questa richiesta, puoi ignorare questa email.</p>`,
	},
	map[Lang]string{
		English: `Hello {{.Name}},

we have received your request to join {{.App}} with the address {{.Email}}.

An administrator will review it. You will be able to sign in once your account has been approved.

If you did not ask for this, you can ignore this email.
`,
		Italian: `Gentile {{.Name}},

abbiamo ricevuto la tua richiesta di accesso a {{.App}} con l'indirizzo {{.Email}}.

Un amministratore la esaminerà. Potrai accedere quando il tuo account sarà stato approvato.

Se non hai fatto tu questa richiesta, puoi ignorare questa email.
`,
	},
)

var registrationNotice = newKind(
	map[Lang]string{
		English: "New registration request at %s",
		Italian: "Nuova richiesta di registrazione a %s",
	},
	map[Lang]string{
		English: `<p>A new account is waiting for approval at <strong>{{.App}}</strong>:</p>
<ul><li>Name: {{.Name}}</li><li>Email: {{.Email}}</li></ul>
<p>It has the pending level and cannot sign in until an administrator gives it a privilege in user administration.</p>`,
		Italian: `<p>Un nuovo account è in attesa di approvazione su <strong>{{.App}}</strong>:</p>
<ul><li>Nome: {{.Name}}</li><li>Email: {{.Email}}</li></ul>
<p>Ha il livello "in attesa" e non può accedere finché un amministratore non gli assegna un privilegio nella gestione utenti.</p>`,
	},
	map[Lang]string{
		English: `A new account is waiting for approval at {{.App}}:

Name: {{.Name}}
Email: {{.Email}}

It has the pending level and cannot sign in until an administrator gives it a privilege in user administration.
`,
		Italian: `Un nuovo account è in attesa di approvazione su {{.App}}:

Nome: {{.Name}}
Email: {{.Email}}

Ha il livello "in attesa" e non può accedere finché un amministratore non gli assegna un privilegio nella gestione utenti.
`,
	},
)

var passwordReset = newKind(
	map[Lang]string{
		English: "Reset your password for %s",
		Italian: "Reimposta la tua password per %s",
	},
	map[Lang]string{
		English: `<p>Hello {{.Name}},</p>
<p>someone asked to reset the password of your account at <strong>{{.App}}</strong>. To choose a new password, open this link:</p>
<p><a href="{{.Link}}">{{.Link}}</a></p>
<p>The link works once and expires in one hour. If you did not ask for a reset, ignore this email: your password stays as it is.</p>`,
		Italian: `<p>Gentile {{.Name}},</p>
<p>è stata chiesta la reimpostazione della password del tuo account su <strong>{{.App}}</strong>. Per scegliere una nuova password, apri questo link:</p>
<p><a href="{{.Link}}">{{.Link}}</a></p>
<p>Il link funziona una sola volta e scade tra un'ora. Se non hai chiesto tu la reimpostazione, ignora questa email: la tua password resta invariata.</p>`,
	},
	map[Lang]string{
		English: `Hello {{.Name}},

someone asked to reset the password of your account at {{.App}}. To choose a new password, open this link:

{{.Link}}

The link works once and expires in one hour. If you did not ask for a reset, ignore this email: your password stays as it is.
`,
		Italian: `Gentile {{.Name}},

è stata chiesta la reimpostazione della password del tuo account su {{.App}}. Per scegliere una nuova password, apri questo link:

{{.Link}}

Il link funziona una sola volta e scade tra un'ora. Se non hai chiesto tu la reimpostazione, ignora questa email: la tua password resta invariata.
`,
	},
)

// render fills one kind in lang (English when lang has no template).
func (k kind) render(lang Lang, app string, data map[string]any) (Content, error) {
	if _, ok := k.html[lang]; !ok {
		lang = English
	}
	data["Lang"] = string(lang)
	var h, t bytes.Buffer
	if err := k.html[lang].ExecuteTemplate(&h, "layout", data); err != nil {
		return Content{}, err
	}
	if err := k.text[lang].Execute(&t, data); err != nil {
		return Content{}, err
	}
	subject := strings.ReplaceAll(k.subject[lang], "%s", oneLine(app))
	return Content{Subject: subject, HTML: h.String(), Text: t.String()}, nil
}

// RegistrationConfirmation is the email to the person who registered.
func RegistrationConfirmation(lang Lang, d RegistrationData) (Content, error) {
	return registrationConfirmation.render(lang, d.App, map[string]any{"App": d.App, "Name": d.Name, "Email": d.Email})
}

// RegistrationNotice is the email to the app's admins and super_admins
// about a new pending account.
func RegistrationNotice(lang Lang, d RegistrationData) (Content, error) {
	return registrationNotice.render(lang, d.App, map[string]any{"App": d.App, "Name": d.Name, "Email": d.Email})
}

// PasswordReset is the email carrying a reset link.
func PasswordReset(lang Lang, d ResetData) (Content, error) {
	return passwordReset.render(lang, d.App, map[string]any{"App": d.App, "Name": d.Name, "Link": d.Link})
}
