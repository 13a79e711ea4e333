"""Headless Chromium for the tests of our HTML pages, driven by selenium; skips cleanly without them."""
import shutil

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,900")


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome-headless-shell"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def headless_chrome(profile_dir):
    """A selenium Chrome driver on a fresh profile in profile_dir (the caller quits it), or a skip."""
    browser, driver_path = chromium(), shutil.which("chromedriver")
    if browser is None or driver_path is None:
        pytest.skip("no headless browser: needs chromium and chromedriver on PATH "
                    "(Debian: apt-get install chromium chromium-driver; .ci/run installs them)")
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is in the test extra: pip install -e '.[test]'")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*FLAGS, f"--user-data-dir={profile_dir}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
