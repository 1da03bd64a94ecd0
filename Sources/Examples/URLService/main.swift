// lifeline-url: resolves openURL, user activities and shortcut items to routes (mPaaS SchemeHandler).
import Lifeline

await URLService.make()
    .main(about: "Routes openURL, continueUserActivity and shortcut items; 'resolve' and 'history' methods.")
