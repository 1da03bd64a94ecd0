// A service author writes `import Lifeline` and gets the event names, JSON values and status codes too.
@_exported import LifelineProtocol
