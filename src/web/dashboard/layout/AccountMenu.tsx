import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useCurrentUser } from '../../session/CurrentUser.tsx';
import { useSession } from '../../session/SessionProvider.tsx';
import { Button } from '../../ui/actions/Button.tsx';

/** Who is signed in, to which workspace, and the way out. */
export function AccountMenu() {
  const me = useCurrentUser();
  const { signOut } = useSession();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const leave = async () => {
    setBusy(true);
    await signOut();
    navigate('/login?signed_out=1', { replace: true });
  };
  return (
    <div className="account-menu">
      <p className="account-who">
        <span className="account-email">{me.user.email}</span>
        <span className="account-workspace">
          Workspace <code>{me.workspace_id}</code> · {me.roles.join(', ')}
        </span>
      </p>
      <Button busy={busy} onClick={() => void leave()}>
        Sign out
      </Button>
    </div>
  );
}
