"""Drives the operator console in headless Chromium against a running gateway.

Usage: console_browser_test.py BASE_URL OPERATOR_TOKEN SCREENSHOT_DIR

Signs in, creates an app, generates and activates a key, adds a user, sets
the app's phone codes up through the typed options form (a wrong value's
message beside its field, the rest of the input kept, a Twilio sender
saved), gets a token for that user from the public endpoint, checks it in
the validator, finds the issued row and the chart on the audit page, then,
as the app's own admin, finds the operator-only option read-only and
unchangeable by editing the page, and last revokes the signed-in admin
token and sees the session end. On every page it checks that each form
field has a label, that the page fits a phone's width, and that axe-core
finds no serious or critical accessibility violation. Screenshots of the
apps page, the options form and the audit chart go to SCREENSHOT_DIR.
Exits 0 when every step held; otherwise prints the step that failed.
"""

import json
import os
import sys
import urllib.error
import urllib.request

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

BASE, TOKEN, SHOTS = sys.argv[1], sys.argv[2], sys.argv[3]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("GATEWAY_TEST_CHROMIUM", "/usr/bin/chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1200,900", "--lang=en-US"):
        options.add_argument(argument)
    service = Service(executable_path=os.environ.get("GATEWAY_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def wait_for(driver, css):
    return WebDriverWait(driver, 15).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))


def replaced(element):
    """A wait condition: the page holding `element` has been replaced. While
    Chromium swaps documents, asking about the old node can fail with an
    inspector error instead of a stale reference; both mean it is gone."""
    def check(_):
        try:
            element.is_enabled()
            return False
        except (StaleElementReferenceException, WebDriverException):
            return True
    return check


def settle(driver):
    WebDriverWait(driver, 15).until(lambda d: d.execute_script("return document.readyState") == "complete")


def page_is_usable(driver, name):
    """Every visible field has a label; nothing overflows a 390 px wide screen."""
    unlabeled = driver.execute_script("""
        return Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
          .filter(f => !(f.id && document.querySelector('label[for="' + f.id + '"]')) && !f.closest('label'))
          .map(f => f.name || f.id || f.outerHTML.slice(0, 60));
    """)
    check(not unlabeled, f"{name}: fields without a label: {unlabeled}")
    size = driver.get_window_size()
    driver.set_window_size(390, 844)
    settle(driver)
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    widest = driver.execute_script("""
        const edge = document.documentElement.clientWidth;
        return Array.from(document.body.querySelectorAll('*'))
          .filter(e => e.getBoundingClientRect().right > edge + 1 && !Array.from(e.children).some(c => c.getBoundingClientRect().right > edge + 1))
          .slice(0, 3).map(e => e.outerHTML.slice(0, 120));
    """)
    driver.set_window_size(size["width"], size["height"])
    check(overflow <= 1, f"{name}: wider than a phone screen by {overflow} px; past the edge: {widest}")
    accessible(driver, name)


def accessible(driver, name):
    """axe-core (through axe-selenium-python) finds no serious or critical violation."""
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    grave = [f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes']][:3]}"
             for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    check(not grave, f"{name}: accessibility violations: {grave}")
    check(results["passes"], f"{name}: axe ran no rule")


def submit(driver, form_css, fields, confirm=False):
    form = wait_for(driver, form_css)
    for name, value in fields.items():
        boxes = form.find_elements(By.CSS_SELECTOR, f"input[type=checkbox][name='{name}'][value='{value}']")
        field = boxes[0] if boxes else form.find_element(By.NAME, name)
        if field.get_attribute("type") == "checkbox":
            if not field.is_selected():
                field.click()
        elif field.tag_name == "select":
            field.find_element(By.CSS_SELECTOR, f"option[value='{value}']").click()
        else:
            field.clear()
            field.send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    if confirm:
        WebDriverWait(driver, 5).until(expected_conditions.alert_is_present()).accept()
    WebDriverWait(driver, 15).until(replaced(form))
    settle(driver)


def open_from(driver, page, link_text):
    """Opens `page` (an app's settings page) and follows its link named `link_text`."""
    driver.get(page)
    settle(driver)
    follow(driver, link_text)


def follow(driver, link_text):
    link = driver.find_element(By.LINK_TEXT, link_text)
    link.click()
    WebDriverWait(driver, 15).until(replaced(link))
    settle(driver)


def post_json(path, body, token=None, method="POST"):
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = "Bearer " + token
    request = urllib.request.Request(BASE + path, data=None if body is None else json.dumps(body).encode(),
                                     headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def notice(driver):
    found = driver.find_elements(By.CSS_SELECTOR, ".notice")
    return found[0].text if found else ""


def run(driver):
    step = "sign in"
    driver.get(BASE + "/console/apps")
    check("/console/sign-in" in driver.current_url, f"{step}: not sent to sign-in but to {driver.current_url}")
    page_is_usable(driver, "sign-in")
    # By keyboard only: the token field has the focus, Enter sends the form.
    field = driver.switch_to.active_element
    check(field.get_attribute("name") == "token", f"{step}: the focus is on {field.get_attribute('name')!r}")
    field.send_keys(TOKEN, Keys.ENTER)
    WebDriverWait(driver, 15).until(replaced(field))
    settle(driver)
    check(driver.current_url.endswith("/console/apps"), f"{step}: landed on {driver.current_url}")
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    first = driver.switch_to.active_element
    check(first.get_attribute("class") == "skip", f"{step}: the first Tab reaches {first.get_attribute('outerHTML')[:80]}")
    check(TOKEN not in driver.page_source, f"{step}: the token is in the page")
    page_is_usable(driver, "apps")

    step = "create an app"
    submit(driver, "form[method=post][action='/console/apps']", {"name": "Browser Shop", "credential_types": "password"})
    check("App created" in notice(driver), f"{step}: {notice(driver)!r}")
    app_id = driver.find_element(By.CSS_SELECTOR, "p.id code").text
    app_page = driver.current_url.split("?")[0]
    app_uuid = app_id.rsplit("/", 1)[-1]  # the admin API's path takes the bare id
    page_is_usable(driver, "app settings")

    step = "generate and activate a key"
    follow(driver, "Keys")
    submit(driver, "form[action$='/keys/generate']", {"bits": "2048"})
    submit(driver, "form[action$='/keys/generate']", {"bits": "2048"})
    states = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td .badge")]
    check(sorted(states) == ["active", "next"], f"{step}: key states {states}")
    submit(driver, "form[action$='/activate']", {})
    check("Key activated" in notice(driver), f"{step}: {notice(driver)!r}")
    states = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td .badge")]
    check(sorted(states) == ["active", "retired"], f"{step}: key states after activation {states}")
    page_is_usable(driver, "keys")

    step = "add a user"
    follow(driver, "Users")
    page_is_usable(driver, "users")
    submit(driver, "form[method=post][action$='/users']",
           {"user_id": "dana", "password": "a-long-enough-password", "display_name": "Dana Scully"})
    check("User saved" in notice(driver), f"{step}: {notice(driver)!r}")
    check("a-long-enough-password" not in driver.page_source, f"{step}: the password is in the page")
    page_is_usable(driver, "user")

    step = "set phone codes up through the options form"
    open_from(driver, app_page, "phone_code options")
    page_is_usable(driver, "phone_code options")
    twilio_token = "twilio-auth-token-0123456789"
    submit(driver, "form.options-form", {
        "o.code_length": "99", "o.sender.type": "twilio", "o.sender.twilio.account_sid": "AC0123456789",
        "o.sender.twilio.auth_token": twilio_token, "o.sender.twilio.from": "+15005550006"})
    message = wait_for(driver, "#opt-code_length-error").text
    check(message == "plugins.phone_code.code_length must be a whole number from 4 to 10.", f"{step}: {message!r}")
    field = driver.find_element(By.ID, "opt-code_length")
    check(field.get_attribute("aria-invalid") == "true", f"{step}: the field is not marked invalid")
    check(field.get_attribute("aria-describedby").endswith("opt-code_length-error"), f"{step}: the message is not the field's")
    check(not driver.find_element(By.ID, "opt-sender-webhook-url").is_displayed(),
          f"{step}: the webhook sender's fields show beside the chosen twilio's")
    label = driver.find_element(By.CSS_SELECTOR, "label[for='opt-sender-twilio-account_sid']").text
    check(label.startswith("Account SID"), f"{step}: the account SID's label reads {label!r}")
    kept = driver.find_element(By.ID, "opt-sender-twilio-account_sid").get_attribute("value")
    check(kept == "AC0123456789", f"{step}: the typed account SID became {kept!r}")
    check(twilio_token not in driver.page_source, f"{step}: the auth token is in the page")
    page_is_usable(driver, "phone_code options, refused")
    submit(driver, "form.options-form", {"o.code_length": "6", "o.sender.twilio.auth_token": twilio_token})
    check("Options saved" in notice(driver), f"{step}: {notice(driver)!r}")
    sender = driver.find_element(By.ID, "opt-sender")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", sender)
    sender.screenshot(os.path.join(SHOTS, "console-phone-code-options.png"))
    status, app = post_json(f"/admin/v1/apps/{app_uuid}", None, token=TOKEN, method="GET")
    check(status == 200 and "phone_code" in app.get("credential_types", []), f"{step}: GET /admin/v1/apps/{app_uuid}: {status} {app}")
    sender = app["plugins"]["phone_code"]["sender"]
    check(sender["type"] == "twilio" and sender["auth_token"] == "********", f"{step}: sender {sender}")
    # Saved again untouched: the auth token left empty is kept, not cleared.
    submit(driver, "form.options-form", {"o.max_attempts": "4"})
    check("Options saved" in notice(driver), f"{step}: saving again: {notice(driver)!r}")

    step = "set email codes up through the options form: an SMTP sender and a template"
    open_from(driver, app_page, "email_code options")
    smtp_password = "smtp-password-0123456789"
    submit(driver, "form.options-form", {
        "o.from": "codes@shop.example", "o.sender.type": "smtp", "o.sender.smtp.host": "smtp.shop.example",
        "o.sender.smtp.username": "codes", "o.sender.smtp.password": smtp_password,
        "o.templates.0.~name": "en", "o.templates.0.subject": "Your Browser Shop code",
        "o.templates.0.text": "Your code is {code}. It lasts {minutes} minutes."})
    check("Options saved" in notice(driver), f"{step}: {notice(driver)!r} {driver.find_elements(By.CSS_SELECTOR, '.field-error')}")
    check(smtp_password not in driver.page_source, f"{step}: the SMTP password is in the page")
    status, app = post_json(f"/admin/v1/apps/{app_uuid}", None, token=TOKEN, method="GET")
    options = app.get("plugins", {}).get("email_code", {})
    check(options.get("sender", {}).get("password") == "********" and options["sender"]["host"] == "smtp.shop.example",
          f"{step}: sender stored as {options.get('sender')}")
    check(options.get("templates", {}).get("en", {}).get("subject") == "Your Browser Shop code",
          f"{step}: templates stored as {options.get('templates')}")
    check("email_code" in app["credential_types"], f"{step}: credential types {app['credential_types']}")
    follow(driver, "Email")
    submit(driver, "form[action$='/email/preview']", {"locale": "en"})
    subject = wait_for(driver, "#preview-title").text
    check(subject == "Your Browser Shop code", f"{step}: the preview's subject is {subject!r}")
    page_is_usable(driver, "email preview")
    submit(driver, "form[action$='/email/test']", {"to": "ops@shop.example"})
    check("Test message queued" in notice(driver), f"{step}: {notice(driver)!r}")

    step = "set passkeys up through the options form and read the association files"
    open_from(driver, app_page, "passkey options")
    submit(driver, "form.options-form", {"o.rp_id": "shop.example", "o.ios_app_ids": "ABCDE12345.example.shop"})
    check("Options saved" in notice(driver), f"{step}: {notice(driver)!r}")
    follow(driver, "Passkeys")
    page_is_usable(driver, "passkeys")
    check("ABCDE12345.example.shop" in driver.page_source, f"{step}: the association files do not name the iOS app")
    follow(driver, "Phone numbers")
    page_is_usable(driver, "phone numbers")

    step = "turn sessions and the second factor on through their forms"
    open_from(driver, app_page, "Sessions")
    page_is_usable(driver, "sessions")
    submit(driver, "form.options-form", {"on": "true", "o.idle_timeout_seconds": "3600", "o.max_sessions_per_user": "3"})
    check("Options saved" in notice(driver), f"{step}: sessions: {notice(driver)!r}")
    form = driver.find_element(By.CSS_SELECTOR, "form.options-form")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", form)
    form.screenshot(os.path.join(SHOTS, "console-sessions.png"))
    open_from(driver, app_page, "Second factor")
    page_is_usable(driver, "second factor")
    submit(driver, "form.options-form", {"on": "true", "o.requirement": "optional", "o.issuer": "Browser Shop"})
    check("Options saved" in notice(driver), f"{step}: second factor: {notice(driver)!r}")
    open_from(driver, app_page, "Self-service")
    page_is_usable(driver, "self-service")
    status, app = post_json(f"/admin/v1/apps/{app_uuid}", None, token=TOKEN, method="GET")
    check(app.get("sessions", {}).get("idle_timeout_seconds") == 3600 and app["sessions"]["max_sessions_per_user"] == 3,
          f"{step}: sessions stored as {app.get('sessions')}")
    check(app.get("mfa", {}).get("requirement") == "optional" and app["mfa"]["issuer"] == "Browser Shop",
          f"{step}: mfa stored as {app.get('mfa')}")

    step = "add a Stream token profile through its form"
    open_from(driver, app_page, "Token profiles")
    page_is_usable(driver, "token profiles")
    stream_secret = "stream-api-secret-0123456789"
    submit(driver, "form.options-form", {
        "o.token_profiles.1.type": "stream", "o.token_profiles.1.stream.api_key": "browser-shop",
        "o.token_profiles.1.stream.api_secret": stream_secret})
    check("Options saved" in notice(driver), f"{step}: {notice(driver)!r}")
    check(stream_secret not in driver.page_source, f"{step}: the Stream secret is in the page")
    row = driver.find_element(By.ID, "opt-token_profiles-1")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", row)
    row.screenshot(os.path.join(SHOTS, "console-token-profile.png"))
    open_from(driver, app_page, "Rate limits")
    page_is_usable(driver, "rate limits")

    step = "get a token through the public endpoint"
    status, answer = post_json("/v1/identity_tokens", {
        "app_id": app_id, "user_id": "dana", "nonce": "browser+nonce/=",
        "credentials": {"type": "password", "password": "a-long-enough-password"}})
    check(status == 200, f"{step}: {status} {answer}")
    check(answer.get("refresh_token"), f"{step}: sessions are on, yet no refresh token in {sorted(answer)}")
    token = answer["identity_token"]
    status, streamed = post_json("/v1/identity_tokens", {
        "app_id": app_id, "user_id": "dana", "nonce": "stream-nonce", "token_profile": "stream",
        "credentials": {"type": "password", "password": "a-long-enough-password"}})
    check(status == 200 and streamed.get("token_profile", "stream") == "stream", f"{step}: as Stream: {status} {streamed}")
    status, answer = post_json("/v1/identity_tokens", {
        "app_id": app_id, "user_id": "dana", "nonce": "n",
        "credentials": {"type": "password", "password": "not-her-password"}})
    check(status == 401, f"{step}: a wrong password answered {status}")

    step = "validate the token"
    follow(driver, "Token validator")
    submit(driver, "form[action='/console/validator']", {"identity_token": token})
    verdict = wait_for(driver, "#verdict").text
    check(verdict == "Valid", f"{step}: verdict {verdict!r}")
    claims = json.loads(driver.find_element(By.ID, "token-claims").text)
    check(claims["prn"] == "dana" and claims["nce"] == "browser+nonce/=", f"{step}: claims {claims}")
    page_is_usable(driver, "validator")

    step = "see the issued row and the chart"
    driver.get(app_page + "/audit")
    settle(driver)
    rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.events tbody tr")]
    check(any("token.issued" in row and "dana" in row for row in rows), f"{step}: rows {rows[:5]}")
    check(any("token.denied" in row and "bad_password" in row for row in rows), f"{step}: no denial in {rows[:5]}")
    chart = driver.find_element(By.CSS_SELECTOR, "svg.chart")
    label = chart.get_attribute("aria-label")
    check("2 issued" in label and "1 denied" in label, f"{step}: chart says {label!r}")
    legend = [text.text for text in chart.find_elements(By.CSS_SELECTOR, "text.legend")]
    check("denied: bad_password: 1" in legend, f"{step}: legend {legend}")
    page_is_usable(driver, "audit")
    figure = driver.find_element(By.CSS_SELECTOR, "figure.chart-box")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", figure)
    figure.screenshot(os.path.join(SHOTS, "console-audit-chart.png"))
    driver.get(BASE + "/console/audit")
    settle(driver)
    page_is_usable(driver, "every app's audit")
    driver.get(BASE + "/console/apps")
    settle(driver)
    driver.save_screenshot(os.path.join(SHOTS, "console-apps.png"))

    step = "every plugin's options form is usable"
    driver.get(app_page)
    settle(driver)
    links = [link.text for link in driver.find_elements(By.CSS_SELECTOR, "a") if link.text.endswith(" options")]
    check({"password options", "phone_code options", "webhook options", "passkey options"} <= set(links),
          f"{step}: the app page links {links}")
    for link in links:
        open_from(driver, app_page, link)
        page_is_usable(driver, link)

    step = "as the app's admin, an operator-only option is read-only"
    status, created = post_json("/admin/v1/admin_tokens", {"name": "app admin", "scope": f"app:{app_uuid}"}, token=TOKEN)
    check(status == 201, f"{step}: creating the token: {status} {created}")
    submit(driver, "form.sign-out", {})
    submit(driver, "form[action='/console/sign-in']", {"token": created["token"]})
    driver.get(app_page + "/options/phone_code")
    settle(driver)
    base_url = driver.find_element(By.ID, "opt-sender-twilio-base_url")
    check(base_url.get_attribute("readonly") is not None, f"{step}: base_url is editable")
    page_is_usable(driver, "phone_code options, app admin")
    # The page's HTML edited as an attacker would: readonly removed, a value of their own typed.
    driver.execute_script("arguments[0].removeAttribute('readonly')", base_url)
    submit(driver, "form.options-form", {"o.sender.twilio.base_url": "https://attacker.example"})
    check("Options saved" in notice(driver), f"{step}: {notice(driver)!r}")
    status, app = post_json(f"/admin/v1/apps/{app_uuid}", None, token=TOKEN, method="GET")
    check("base_url" not in app["plugins"]["phone_code"]["sender"], f"{step}: {app['plugins']['phone_code']['sender']}")
    submit(driver, "form.sign-out", {})
    submit(driver, "form[action='/console/sign-in']", {"token": TOKEN})

    step = "create an admin token, sign in with it, revoke it"
    driver.get(BASE + "/console/admin-tokens")
    settle(driver)
    submit(driver, "form[action='/console/admin-tokens']", {"name": "browser session"})
    created = wait_for(driver, "#created-token").get_attribute("value")
    check(created.startswith("igw_"), f"{step}: created {created[:6]!r}")
    page_is_usable(driver, "admin tokens")
    submit(driver, "form.sign-out", {})
    check("/console/sign-in" in driver.current_url, f"{step}: sign-out went to {driver.current_url}")
    driver.get(BASE + "/console/apps")
    check("/console/sign-in" in driver.current_url, f"{step}: a page after sign-out: {driver.current_url}")
    submit(driver, "form[action='/console/sign-in']", {"token": created})
    driver.get(BASE + "/console/admin-tokens")
    settle(driver)
    mine = [row for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr") if "you" in row.text]
    check(len(mine) == 1, f"{step}: {len(mine)} rows marked as this session's token")
    revoke = mine[0].find_element(By.CSS_SELECTOR, "button[type=submit]")
    revoke.click()
    WebDriverWait(driver, 5).until(expected_conditions.alert_is_present()).accept()
    WebDriverWait(driver, 15).until(replaced(revoke))
    settle(driver)
    check("/console/sign-in" in driver.current_url, f"{step}: after revoking, at {driver.current_url}")
    driver.get(BASE + "/console/apps")
    check("/console/sign-in" in driver.current_url, f"{step}: the revoked session still opens {driver.current_url}")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    driver = browser()
    try:
        run(driver)
    except Exception as error:  # report the step and the page, then fail
        print(f"FAILED: {error}\nat {driver.current_url}\n{driver.page_source[:3000]}")
        return 1
    finally:
        driver.quit()
    print("console browser suite: every step held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
