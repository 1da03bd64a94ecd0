// lifeline-push: remote and local notifications, as mPaaS's push module would handle them.
import Lifeline

await PushService.make()
    .main(about: "Handles push and local notification events; 'status' reports the device token and counts.")
